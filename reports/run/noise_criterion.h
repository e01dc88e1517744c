#pragma once
// nvbench-style convergence (stop reason "noise"): at least --min-samples timed steps over at
// least --min-time seconds, and the relative stdev of their times at most --max-noise.
#include <string>
#include <vector>

#include "reports/run/stopping_criterion.h"
#include "reports/run/sweep_spec.h"

namespace hb::run {

class NoiseCriterion final : public StoppingCriterion {
 public:
  explicit NoiseCriterion(const StopCriteria& stop) : stop_(stop) {}
  std::string name() const override { return "noise"; }
  void add(const TimedStep& sample) override;
  bool is_finished() const override;

 private:
  StopCriteria stop_;
  std::vector<double> samples_ns_;
  double elapsed_s_ = 0;
};

}  // namespace hb::run
