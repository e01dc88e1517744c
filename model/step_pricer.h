#pragma once
// The model's hook on the sweep loop (bench::StepObserver): each executed step's Traffic (a
// sampled batch's: the batch's) priced on a platform (model/roofline.h). Model mode's pricer
// replaces the step's measured timing with the price and labels the point "modeled" on the
// platform; an observing one (run --platform in measure mode, validate-model) keeps the measurement
// and reports the prices beside it (Point::modeled) when every timed step got one.
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "model/platform_model.h"
#include "model/tensor_parallel.h"
#include "reports/report.h"
#include "bench/step_observer.h"
#include "bench/sweep_spec.h"

namespace hb::model {

struct StepPrice {
  double total_ns = 0;  // <= 0: this step was not priced
  std::map<std::string, double> phase_ns;
  std::string overlap;  // the overlap structure used, text form
};
// Step s of the point with these axes (warm-up steps included), which moved `traffic`; throws
// hb::Error on failure.
using PriceFn =
    std::function<StepPrice(const reports::PointAxes&, const Strategy&, int s, const Traffic&)>;

struct PricerOptions {
  bool replace = true;  // false: observe (the measured timing stays)
  // Adds model.platform and model.overlap to a planned point's strategy_params.
  bool annotate = true;
  PriceFn price;  // empty: model_step on the platform with the strategy's overlap
  // Model mode's sweep: a point standing for a batch (model/sampled_batch.h) records and is
  // priced with the batch's traffic. Needed when a point stands for more than one sequence.
  const bench::SweepSpec* sweep = nullptr;
  // Model mode: how the replica is deployed (model/tensor_parallel.h). The steps are priced as
  // one rank's (rank_traffic), plus the layer's two all-reduces of `hidden`-wide rows in the
  // sync phase (scope layer, tp > 1). Its points say it in strategy_params
  // "model.deployment" (a multi-GPU node or fp8) and axes.extra "dtypes" (fp8: a lane of its own).
  Deployment deployment;
  int hidden = 0;
};

// The hook pricing each executed step on `m`.
class StepPricer final : public bench::StepObserver {
 public:
  StepPricer(const PlatformModel& m, PricerOptions o);
  // Whether the records' timings replace the measured ones (model mode): then nothing is timed.
  bool replaces_timing() const { return o_.replace; }
  // Axes every point it replaces the timing of carries in axes.extra ("platform"), which keep
  // one platform's points apart from another's.
  std::map<std::string, std::string> lane_axes() const;
  // Labels a point before its plan, whether or not it then runs (model mode: provenance
  // modeled, the platform's accelerator kind and lane_axes).
  void label(reports::Point& p) const;
  std::unique_ptr<PointRecord> observe(reports::Point& p, const Strategy& s) const override {
    return observe(p, s, 1);
  }
  // `stands_for`: the batch the point's executed sequence stands for (model/sampled_batch.h; 1:
  // the point executes its batch as it is).
  std::unique_ptr<PointRecord> observe(reports::Point& p, const Strategy& s, int stands_for) const;
  // Model mode's step times for strategies that adapt to them (core/step_times.h): each step of
  // the executed sequence, as the batch of `stands_for`'s, priced per resource on the platform.
  // Null when the pricer only observes (the strategies then read the clock).
  std::unique_ptr<StepTimeSource> step_times(int stands_for) const;

 private:
  PlatformModel m_;
  PricerOptions o_;
};

std::shared_ptr<const StepPricer> make_step_pricer(const PlatformModel& m,
                                                   PricerOptions options = {});

}  // namespace hb::model
