#pragma once
// When one strategy's point stops taking timed steps (nvbench's stopping_criterion_base): a
// rule sees every timed step and says whether it is finished; the first finished rule of
// StoppingRules (stopping_rules.h) ends the point, and its reason is the report's
// step.stop_reason. Each rule is one file (noise_criterion.h, timeout_criterion.h, ...): a new
// rule is a new file and one line in stopping_rules.cpp.
#include "reports/report.h"

namespace hb::bench {

// What a rule sees after each timed step of one strategy at one point.
struct TimedStep {
  int step = 0;          // decode step index (warm-up steps count)
  double step_ns = 0;    // this step's time
  double elapsed_s = 0;  // wall time since the first timed step started
  int scored = 0;        // steps scored against the fp64 reference so far
  int pass = 0;          // replay of the decode positions (0: the first; --max-samples)
};

class StoppingCriterion {
 public:
  virtual ~StoppingCriterion() = default;
  // The stop reason recorded when this rule ends a point (noise, timeout, max-steps).
  virtual reports::StopReason reason() const = 0;
  virtual void add(const TimedStep& sample) = 0;
  virtual bool is_finished() const = 0;
};

}  // namespace hb::bench
