#include "core/base/check.h"

#include <cstdio>
#include <cstdlib>

namespace flatcheck::detail {

CheckFailure::CheckFailure(const char* cond, const char* file, int line) {
  os_ << "flatcheck: internal check failed: " << cond << " at " << file << ":" << line << ": ";
}

CheckFailure::~CheckFailure() {
  std::fprintf(stderr, "%s\n", os_.str().c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace flatcheck::detail
