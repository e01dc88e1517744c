#pragma once
// --decode-steps and --max-samples: the point has taken as many timed steps as it may (stop
// reason "max-steps"), converged or not. Without --max-samples that is its last decode step
// (the workload has no further one); with it, the count of timed steps, the runner replaying
// the decode positions until then.
#include "bench/stopping_criterion.h"
#include "bench/sweep_spec.h"

namespace hb::bench {

class MaxStepsCriterion final : public StoppingCriterion {
 public:
  // SweepSpec::validate keeps at least one timed step after the warm-up, so the last decode
  // step is always a timed one this rule sees.
  MaxStepsCriterion(int decode_steps, int max_samples);
  reports::StopReason reason() const override;
  void add(const TimedStep& sample) override;
  bool is_finished() const override;

 private:
  int last_step_;
  int max_samples_;
  int samples_ = 0;
  bool reached_ = false;
};

}  // namespace hb::bench
