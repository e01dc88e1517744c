#pragma once
// One strategy's stopping rules at a point: each sees every timed step. The point group asks
// them at the end of every round (bench/round_close.h): a limit (the time-out, the step cap) ends
// the whole group; the group stops on noise once every strategy has converged.
#include <memory>

#include "bench/stopping_criterion.h"
#include "bench/sweep_spec.h"

namespace hb::bench {

class StoppingRules {
 public:
  // `scored` false: the strategy's steps are never scored (a layer stack, run --layers), so its
  // noise does not wait for --accuracy-steps.
  explicit StoppingRules(const SweepSpec& spec, bool scored = true);
  void add(const TimedStep& sample);  // to every rule
  // Noise under the target, once accuracy has its scored steps (stop reason "noise").
  bool converged() const;
  // The limit this strategy has reached (time-out, then the step cap), or null. The time-out
  // waits for --min-samples timed steps (nvbench's rule): fewer cannot say how noisy a point
  // is, so a 1 ms --timeout must not leave one sample reading as settled. The step cap binds
  // regardless (it is a count the user set).
  const StoppingCriterion* limit() const;

 private:
  std::unique_ptr<StoppingCriterion> timeout_, noise_, max_steps_;
  int min_samples_ = 1;
  int samples_ = 0;
};

}  // namespace hb::bench
