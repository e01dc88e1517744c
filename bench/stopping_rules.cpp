#include "bench/stopping_rules.h"

#include <algorithm>

#include "bench/after_accuracy_steps.h"
#include "bench/max_steps_criterion.h"
#include "bench/noise_criterion.h"
#include "bench/timeout_criterion.h"

namespace hb::bench {

namespace {

// The step cap: --max-samples, else kDefaultPasses passes over the timed positions.
int max_timed_steps(const SweepSpec& spec) {
  if (spec.stop.max_samples > 0) return spec.stop.max_samples;
  return StopCriteria::kDefaultPasses * std::max(1, spec.decode_steps - spec.stop.warmup_steps);
}

// Scored steps noise waits for: --accuracy-steps, at most the timed positions of a pass
// (replays are not scored), every one of them for -1.
int accuracy_steps_awaited(const SweepSpec& spec) {
  const int positions = std::max(1, spec.decode_steps - spec.stop.warmup_steps);
  return spec.accuracy_steps < 0 ? positions : std::min(spec.accuracy_steps, positions);
}

}  // namespace

StoppingRules::StoppingRules(const SweepSpec& spec, bool scored)
    : timeout_(std::make_unique<TimeoutCriterion>(spec.stop.timeout_s)),
      noise_(std::make_unique<AfterAccuracySteps>(scored ? accuracy_steps_awaited(spec) : 0,
                                                  std::make_unique<NoiseCriterion>(spec.stop))),
      max_steps_(std::make_unique<MaxStepsCriterion>(max_timed_steps(spec))),
      min_samples_(spec.stop.min_samples) {}

void StoppingRules::add(const TimedStep& sample) {
  ++samples_;
  for (auto* rule : {timeout_.get(), noise_.get(), max_steps_.get()}) rule->add(sample);
}

bool StoppingRules::converged() const { return noise_->is_finished(); }

const StoppingCriterion* StoppingRules::limit() const {
  if (timeout_->is_finished() && samples_ >= min_samples_) return timeout_.get();
  if (max_steps_->is_finished()) return max_steps_.get();
  return nullptr;
}

}  // namespace hb::bench
