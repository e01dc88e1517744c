#pragma once
// --accuracy-steps: holds another rule back until that many timed steps have been scored
// against the reference (StoppingRules passes at most a pass's timed positions; in a replay
// every position already was), so a point that stops on it has all its accuracy figures.
// Records the held rule's reason.
#include <memory>
#include <string>
#include <utility>

#include "bench/stopping_criterion.h"

namespace hb::bench {

class AfterAccuracySteps final : public StoppingCriterion {
 public:
  AfterAccuracySteps(int accuracy_steps, std::unique_ptr<StoppingCriterion> held)
      : accuracy_steps_(accuracy_steps), held_(std::move(held)) {}
  reports::StopReason reason() const override { return held_->reason(); }
  void add(const TimedStep& sample) override {
    scored_ = sample.scored;
    replaying_ = sample.pass > 0;  // replays are not scored: every position already was
    held_->add(sample);
  }
  bool is_finished() const override {
    const bool scored_enough = replaying_ || scored_ >= accuracy_steps_;
    return scored_enough && held_->is_finished();
  }

 private:
  int accuracy_steps_;
  std::unique_ptr<StoppingCriterion> held_;
  int scored_ = 0;
  bool replaying_ = false;
};

}  // namespace hb::bench
