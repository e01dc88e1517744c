#pragma once
// nvbench-style convergence (stop reason "noise"): at least --min-samples timed steps over at
// least --min-time seconds, and the robust noise of their times (robust_rel_noise, core/stats.h:
// IQR / 1.349 median, the figure `report` prints and `compare` judges) at most --max-noise.
#include <string>
#include <vector>

#include "bench/stopping_criterion.h"
#include "bench/sweep_spec.h"

namespace hb::bench {

class NoiseCriterion final : public StoppingCriterion {
 public:
  explicit NoiseCriterion(const StopCriteria& stop) : stop_(stop) {}
  reports::StopReason reason() const override { return reports::StopReason::noise; }
  void add(const TimedStep& sample) override;
  bool is_finished() const override;

 private:
  StopCriteria stop_;
  std::vector<double> samples_ns_;
  double elapsed_s_ = 0;
};

}  // namespace hb::bench
