#include "core/base/faults.h"

#include <cstdio>
#include <cstdlib>

namespace flatcheck {
namespace {

Fault initial_fault() {
  const char* env = std::getenv("FLATCHECK_INJECT");
  if (env == nullptr || *env == '\0') return Fault::kNone;
  auto f = fault_by_name(env);
  if (!f) {
    std::fprintf(stderr, "flatcheck: unknown fault in FLATCHECK_INJECT: '%s'\n", env);
    std::exit(2);
  }
  return *f;
}

Fault& active_slot() {
  static Fault active = initial_fault();
  return active;
}

}  // namespace

const std::vector<FaultInfo>& all_faults() {
  static const std::vector<FaultInfo> faults = {
#define X(e, name, stage, doc, kind) {Fault::e, name, Stage::stage, doc, FaultKind::kind},
#include "core/base/faults.def"
#undef X
  };
  return faults;
}

std::optional<Fault> fault_by_name(std::string_view name) {
  if (name == "none") return Fault::kNone;
  for (const auto& f : all_faults())
    if (f.name == name) return f.fault;
  return std::nullopt;
}

const FaultInfo& fault_info(Fault f) {
  static const FaultInfo none{Fault::kNone, "none", Stage::kEager, "no fault",
                              FaultKind::kWrongResult};
  for (const auto& info : all_faults())
    if (info.fault == f) return info;
  return none;
}

Fault active_fault() {
  return active_slot();
}

namespace {
thread_local bool suppressed = false;
}  // namespace

bool faults_suppressed() {
  return suppressed;
}

ScopedFaultSuppression::ScopedFaultSuppression() : saved_(suppressed) {
  suppressed = true;
}
ScopedFaultSuppression::~ScopedFaultSuppression() {
  suppressed = saved_;
}

void set_active_fault(Fault f) {
  active_slot() = f;
}

}  // namespace flatcheck
