#pragma once
// --decode-steps: the point's last decode step ends it, converged or not (stop reason
// "max-steps"; the workload has no further step).
#include <string>

#include "reports/run/stopping_criterion.h"

namespace hb::run {

class MaxStepsCriterion final : public StoppingCriterion {
 public:
  // SweepSpec::validate keeps at least one timed step after the warm-up, so the last decode
  // step is always a timed one this rule sees.
  explicit MaxStepsCriterion(int decode_steps);
  reports::StopReason reason() const override;
  void add(const TimedStep& sample) override;
  bool is_finished() const override;

 private:
  int last_step_;
  bool reached_ = false;
};

}  // namespace hb::run
