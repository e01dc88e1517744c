#pragma once
// When one strategy's point stops taking timed steps (nvbench's stopping_criterion_base): a
// rule sees every timed step and says whether it is finished. StoppingRules (stopping_rules.h)
// holds one strategy's rules: the noise rule is its converged(), the others its limit(); the
// group stops on them at the end of a round (round_close.cpp), and the reason is the report's
// step.stop_reason. Each rule is one file (noise_criterion.*, timeout_criterion.h, ...).
// A new rule needs (bench/README.md, "Adding a stopping rule", has the details):
//   1. bench/<rule>_criterion.h (.cpp if it is not header-only): a StoppingCriterion;
//   2. stopping_rules.h/.cpp: a member, its construction from the SweepSpec, its entry in
//      add()'s list, and a test in limit() (a limit) or converged() (convergence);
//   3. a reason: a StopReason value and its report name in reports/report.h (enum and
//      kStopReasons), the schema's stop_reason enum (reports/schema/report.schema.json), a fix
//      text in reports/convergence.cpp (convergence_fix), and a schema version bump
//      (reports/README.md, "Version rules"); a rule that only gates convergence reports "noise";
//   4. an option, if it has one: StopCriteria (sweep_spec.h), its check and echo
//      (sweep_spec.cpp), the flag (cli/sweep_options.cpp, cli/run_session.cpp's echo table);
//   5. tests/bench/<rule>_criterion_test.cpp (noise_criterion_test.cpp is the model).
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
