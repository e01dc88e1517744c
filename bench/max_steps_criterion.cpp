#include "bench/max_steps_criterion.h"

namespace hb::bench {

MaxStepsCriterion::MaxStepsCriterion(int decode_steps, int max_samples)
    : last_step_(decode_steps - 1), max_samples_(max_samples) {}

reports::StopReason MaxStepsCriterion::reason() const { return reports::StopReason::max_steps; }

void MaxStepsCriterion::add(const TimedStep& sample) {
  ++samples_;
  reached_ = max_samples_ > 0 ? samples_ >= max_samples_ : sample.step >= last_step_;
}

bool MaxStepsCriterion::is_finished() const { return reached_; }

}  // namespace hb::bench
