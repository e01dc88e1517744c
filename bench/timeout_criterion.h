#pragma once
// --timeout: a point stops sampling once this much wall time has passed since its first timed
// step, converged or not (stop reason "timeout").
#include <string>

#include "bench/stopping_criterion.h"

namespace hb::bench {

class TimeoutCriterion final : public StoppingCriterion {
 public:
  explicit TimeoutCriterion(double timeout_s) : timeout_s_(timeout_s) {}
  reports::StopReason reason() const override { return reports::StopReason::timeout; }
  void add(const TimedStep& sample) override { elapsed_s_ = sample.elapsed_s; }
  bool is_finished() const override { return elapsed_s_ >= timeout_s_; }

 private:
  double timeout_s_;
  double elapsed_s_ = 0;
};

}  // namespace hb::bench
