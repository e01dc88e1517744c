#pragma once
// --max-samples: the point has taken as many timed steps as it may (stop reason "max-steps"),
// converged or not; the runner replays the decode positions until then.
#include "bench/stopping_criterion.h"

namespace hb::bench {

class MaxStepsCriterion final : public StoppingCriterion {
 public:
  explicit MaxStepsCriterion(int max_samples) : max_samples_(max_samples) {}
  reports::StopReason reason() const override { return reports::StopReason::max_steps; }
  void add(const TimedStep&) override { ++samples_; }
  bool is_finished() const override { return samples_ >= max_samples_; }

 private:
  int max_samples_;
  int samples_ = 0;
};

}  // namespace hb::bench
