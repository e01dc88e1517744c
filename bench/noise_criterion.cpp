#include "bench/noise_criterion.h"

#include "core/stats.h"

namespace hb::bench {

void NoiseCriterion::add(const TimedStep& sample) {
  samples_ns_.push_back(sample.step_ns);
  elapsed_s_ = sample.elapsed_s;
}

bool NoiseCriterion::is_finished() const {
  if (static_cast<int>(samples_ns_.size()) < stop_.min_samples || elapsed_s_ < stop_.min_time_s)
    return false;
  // The noise `report` prints and `compare` judges (core/stats.h), not the relative stdev: one
  // preempted step must not keep a quiet point sampling until --decode-steps runs out.
  return robust_rel_noise(summarize(samples_ns_)) <= stop_.max_noise;
}

}  // namespace hb::bench
