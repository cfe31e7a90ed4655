// The loader and the pipeline agree (docs/hardening.md, round three): whatever `load_case`
// accepts runs through every stage. Documents: generated cases and the regression corpus, each
// changed by the structure mutator (harness/fuzz/structure_mutations.h) the way hostile
// documents are. An `error:` finding on an accepted document is a stage refusing what the loader
// let through: the loader could have rejected it, with its path.
#include "harness/fuzz/structure_mutations.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/base/check.h"
#include "core/serialize/serialize.h"
#include "generators/generate.h"
#include "generators/source.h"
#include "harness/oracle.h"

namespace flatcheck {
namespace {

int prop_cases() {
  const char* env = std::getenv("FLATCHECK_PROP_CASES");
  return env ? std::max(1, std::atoi(env)) : 100;
}

std::vector<std::string> base_documents(int generated) {
  std::vector<std::string> docs;
  for (int i = 0; i < generated; ++i)
    docs.push_back(save_case(generate_case_for_seed(mix_seed(2026, static_cast<uint64_t>(i)))));
  for (auto& e : std::filesystem::directory_iterator(std::string(FLATCHECK_SOURCE_DIR) +
                                                     "/corpus/regression")) {
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    docs.push_back(ss.str());
  }
  return docs;
}

TEST(LoaderPipelineProperty, EveryDocumentTheLoaderAcceptsRunsEveryStage) {
  int accepted = 0, rejected = 0, mutants = 0;
  std::vector<std::string> docs = base_documents(prop_cases());
  for (size_t d = 0; d < docs.size(); ++d) {
    for (uint64_t m = 0; m < 30; ++m) {
      std::string text = docs[d];
      if (!mutate_document(text, d * 1000 + m)) continue;
      ++mutants;
      Case c;
      try {
        c = load_case(text, LoadLimits{});
      } catch (const InputError&) {
        ++rejected;
        continue;
      }
      ++accepted;
      OracleResult r = check_case(c);
      // "error": a stage rejected it; "runtime": the eager reference could not run it;
      // "exception": something else escaped a stage.
      EXPECT_FALSE(r.failure &&
                   (r.failure->property == "error" || r.failure->property == "runtime" ||
                    r.failure->property == "exception"))
          << "document " << d << " mutation " << m << ": accepted at load, then "
          << r.failure->signature() << ": " << r.failure->message << "\n"
          << text.substr(0, 4000);
    }
  }
  std::cout << mutants << " mutants: " << accepted << " accepted, " << rejected << " rejected\n";
  // The property means something only when both happen often.
  EXPECT_GE(accepted, mutants / 20);
  EXPECT_GE(rejected, mutants / 20);
}

}  // namespace
}  // namespace flatcheck
