#pragma once
// `hybridbench validate-model`: model error as a first-class figure. One measured sweep runs on
// this machine; the model prices every timed step of it from that step's exact traffic (the
// runner's StepModel hook in observe mode), so measured and modeled medians describe the very
// same steps. Error = (modeled - measured) / measured per point; per strategy, the mean and
// the largest |error| over its points.
#include <map>
#include <string>
#include <vector>

#include "model/calibrate.h"
#include "model/platform_model.h"
#include "reports/report.h"
#include "bench/runner.h"

namespace hb::model {

struct ValidationPoint {
  reports::PointAxes axes;
  reports::PointStatus status = reports::PointStatus::ok;  // the measured point's; only ok ones
                                                           // carry figures
  std::string reason;
  double measured_ns = 0, modeled_ns = 0;  // medians
  double measured_p10_ns = 0;  // 10th percentile: the steps least disturbed by other processes
  double measured_noise = 0;   // robust_rel_noise of the measured step times
  double error = 0;            // (modeled - measured) / measured, medians
  double error_p10 = 0;        // (modeled - measured p10) / measured p10
  // With live ceilings (see validate_model) the modeled figures above use them; these use the
  // profile's ceilings as calibrated once, before the sweep.
  double modeled_static_ns = 0, error_static = 0;
  std::map<std::string, double> measured_phases, modeled_phases;  // medians, ns
  std::string overlap;                                            // structure the model used
};

struct StrategyError {
  std::string strategy;
  int points = 0;
  double mean_abs_error = 0, max_abs_error = 0, mean_error = 0;  // against measured medians
  double mean_abs_error_p10 = 0, max_abs_error_p10 = 0;          // against measured p10
  double mean_abs_error_static = 0, max_abs_error_static = 0;    // static ceilings, against medians
  bool cpu_bound = false;  // modeled cpu time >= half the modeled step at every point
};

struct Validation {
  PlatformModel platform;
  std::vector<ValidationPoint> points;
  std::vector<StrategyError> strategies;  // by name
  reports::Report measured;               // the measured report (as `run` would write it)
  bool live = false;                      // modeled figures use ceilings re-measured per step
};

// `sweep`: resolved once by the caller (SweepSpec::validate, its workload opened), as `run`'s.
// live (optional): re-measure the cpu-side, accelerator-side and copy ceilings at each timed
// step's working sets right after the step (LiveCeilings), so drift in what other processes
// leave of the machine hits measured and modeled alike; the once-calibrated figures are kept
// as modeled_static_ns.
Validation validate_model(const bench::ResolvedSweep& sweep, const bench::RunEnvironment& env,
                          const PlatformModel& m, const bench::ProgressFn& progress = {},
                          const CalibrationOptions* live = nullptr);

// Aligned text: per point, then per strategy, then the goal line for the CPU-bound strategies.
std::string validation_text(const Validation& v, double goal);
// Whether every CPU-bound strategy's largest |error| (medians) is within `goal`.
bool goal_met(const Validation& v, double goal);
// JSON ("hybridbench.model-validation/1"): platform figures with sources, points, per strategy.
std::string validation_json(const Validation& v, double goal);

}  // namespace hb::model
