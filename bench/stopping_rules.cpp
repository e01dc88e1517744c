#include "bench/stopping_rules.h"

#include "bench/after_accuracy_steps.h"
#include "bench/max_steps_criterion.h"
#include "bench/noise_criterion.h"
#include "bench/timeout_criterion.h"

namespace hb::bench {

StoppingRules::StoppingRules(const SweepSpec& spec) {
  rules_.push_back(std::make_unique<TimeoutCriterion>(spec.stop.timeout_s));
  // Keep stepping until accuracy has its samples too, then stop on noise.
  rules_.push_back(std::make_unique<AfterAccuracySteps>(
      spec.accuracy_steps, std::make_unique<NoiseCriterion>(spec.stop)));
  rules_.push_back(std::make_unique<MaxStepsCriterion>(spec.decode_steps, spec.stop.max_samples));
}

void StoppingRules::add(const TimedStep& sample) {
  for (auto& rule : rules_) rule->add(sample);
}

const StoppingCriterion* StoppingRules::finished() const {
  for (const auto& rule : rules_)
    if (rule->is_finished()) return rule.get();
  return nullptr;
}

}  // namespace hb::bench
