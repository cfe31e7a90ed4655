// Injectable faults: named deviations in the core that model real bug classes.
//
// Every fault is off by default. One fault at a time can be switched on at run time, by
// `set_active_fault()` (the CLI's `--inject NAME`) or by the environment variable
// FLATCHECK_INJECT=NAME, read once on first use. The list lives in core/base/faults.def.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/stage.h"

namespace flatcheck {

enum class Fault {
  kNone,
#define X(e, name, stage, doc, kind) e,
#include "core/base/faults.def"
#undef X
};

// What an injected fault does to the process: wrong results (reported by the oracle), a
// crash, or a hang. Crashes and hangs are only safe in isolated campaigns.
enum class FaultKind { kWrongResult, kCrash, kHang, kDeviceOnly };

// Static description of one fault.
struct FaultInfo {
  Fault fault;
  std::string_view name;  // CLI name, e.g. "inline-by-name"
  Stage stage;            // the first path whose output shows the fault, e.g. kFlattened
  std::string_view doc;   // one line: what it models
  FaultKind kind = FaultKind::kWrongResult;
};

// All faults, in declaration order (kNone excluded).
const std::vector<FaultInfo>& all_faults();

// Looks a fault up by CLI name; nullopt when unknown.
std::optional<Fault> fault_by_name(std::string_view name);

// The info for a fault (kNone gives name "none").
const FaultInfo& fault_info(Fault f);

// The fault now switched on (kNone by default, or FLATCHECK_INJECT's value).
Fault active_fault();

// Switches a fault on (kNone switches all off). Not thread-safe against concurrent runs.
void set_active_fault(Fault f);

// True while this thread suppresses faults (see ScopedFaultSuppression).
bool faults_suppressed();

// True when `f` is the active fault. Used at the exact place where each fault lives.
inline bool fault_on(Fault f) {
  return active_fault() == f && !faults_suppressed();
}

// Switches faults off on this thread for a scope: the harness's own file I/O (case files)
// uses the core's serializer and must not be bent by a fault injected into the system under
// test.
class ScopedFaultSuppression {
 public:
  ScopedFaultSuppression();
  ~ScopedFaultSuppression();
  ScopedFaultSuppression(const ScopedFaultSuppression&) = delete;
  ScopedFaultSuppression& operator=(const ScopedFaultSuppression&) = delete;

 private:
  bool saved_;
};

// RAII switch for tests: sets a fault for a scope and restores the previous one.
class ScopedFault {
 public:
  explicit ScopedFault(Fault f) : saved_(active_fault()) { set_active_fault(f); }
  ~ScopedFault() { set_active_fault(saved_); }
  ScopedFault(const ScopedFault&) = delete;
  ScopedFault& operator=(const ScopedFault&) = delete;

 private:
  Fault saved_;
};

}  // namespace flatcheck
