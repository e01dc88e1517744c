#pragma once
// --decode-steps: the point's last decode step ends it, converged or not (stop reason
// "max-steps"; the workload has no further step).
#include <string>

#include "reports/run/stopping_criterion.h"

namespace hb::run {

class MaxStepsCriterion final : public StoppingCriterion {
 public:
  explicit MaxStepsCriterion(int decode_steps) : decode_steps_(decode_steps) {}
  std::string name() const override { return "max-steps"; }
  void add(const TimedStep& sample) override { last_step_ = sample.step; }
  bool is_finished() const override { return last_step_ + 1 >= decode_steps_; }

 private:
  int decode_steps_;
  int last_step_ = -1;
};

}  // namespace hb::run
