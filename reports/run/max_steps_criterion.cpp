#include "reports/run/max_steps_criterion.h"

namespace hb::run {

MaxStepsCriterion::MaxStepsCriterion(int decode_steps) : last_step_(decode_steps - 1) {}

reports::StopReason MaxStepsCriterion::reason() const { return reports::StopReason::max_steps; }

void MaxStepsCriterion::add(const TimedStep& sample) { reached_ = sample.step >= last_step_; }

bool MaxStepsCriterion::is_finished() const { return reached_; }

}  // namespace hb::run
