#pragma once
// The stopping rules of a sweep, asked in order after every timed step of a strategy; the first
// finished one ends its point (its name is the stop reason).
#include <memory>
#include <vector>

#include "bench/stopping_criterion.h"
#include "bench/sweep_spec.h"

namespace hb::bench {

class StoppingRules {
 public:
  // Today's: the time-out, then noise once accuracy has its steps, then the last decode step.
  explicit StoppingRules(const SweepSpec& spec);
  void add(const TimedStep& sample);  // to every rule
  // The first finished rule, or null.
  const StoppingCriterion* finished() const;

 private:
  std::vector<std::unique_ptr<StoppingCriterion>> rules_;
};

}  // namespace hb::bench
