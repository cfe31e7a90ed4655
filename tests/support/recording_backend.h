// A CPU backend that records what it was asked to do: every kernel launch under the stage the
// oracle announced (on_stage), the thread it ran on, and the graph-capture calls. Tests use it
// to prove an option is read (STYLE habit 16): a path that ignored the backend it was given
// would leave its stage with no launches here.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/cpu_forwarding_backend.h"

namespace flatcheck {

class RecordingBackend final : public CpuForwardingBackend {
 public:
  std::string_view name() const override { return "recording"; }
  bool supports(OpCode op) const override { return !lacks_.count(op); }
  void run_kernel(OpCode op, const std::vector<TensorView>& in, const std::vector<Scalar>& sc,
                  const std::vector<TensorView>& out) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++launches_[stage_];
      ++ops_[std::string(op_info(op).name)];
      threads_.insert(std::this_thread::get_id());
      if (throw_on_ == op) throw std::runtime_error("recording backend: launch refused");
    }
    CpuForwardingBackend::run_kernel(op, in, sc, out);
  }
  void begin_ops(uint64_t, const void*) override { ++begins_; }
  void end_ops(uint64_t, const void*) override { ++ends_; }
  void abort_ops() override { ++aborts_; }

  // The stage later launches are counted under (wire it to OracleOptions::on_stage).
  void set_stage(const std::string& s) {
    std::lock_guard<std::mutex> lock(mu_);
    stage_ = s;
  }
  int64_t launches(const std::string& stage) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = launches_.find(stage);
    return it == launches_.end() ? 0 : it->second;
  }
  int64_t total() const {
    std::lock_guard<std::mutex> lock(mu_);
    int64_t n = 0;
    for (const auto& [_, k] : launches_) n += k;
    return n;
  }
  size_t threads() const {
    std::lock_guard<std::mutex> lock(mu_);
    return threads_.size();
  }
  void throw_on(OpCode op) { throw_on_ = op; }
  void lack(OpCode op) { lacks_.insert(op); }
  int begins_ = 0, ends_ = 0, aborts_ = 0;

 private:
  mutable std::mutex mu_;
  std::string stage_ = "-";
  std::map<std::string, int64_t> launches_, ops_;
  std::set<std::thread::id> threads_;
  std::optional<OpCode> throw_on_;
  std::set<OpCode> lacks_;
};

}  // namespace flatcheck
