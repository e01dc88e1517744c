#pragma once
// One strategy at the point being run, from start to stop (nvbench's state): started
// (accelerator, strategy, plan, load) by start_contender, stepped one round at a time
// (step_round.h), then finished (timing, accuracy, modeled figures; stop reason) or failed
// (status and reason, no accuracy figures).
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/strategy.h"
#include "core/thread_pool.h"
#include "reports/report.h"
#include "reports/run/accuracy.h"
#include "reports/run/runner.h"
#include "reports/run/stopping_rules.h"

namespace hb::run {

// What every contender of a sweep shares.
struct SweepContext {
  const SweepSpec& spec;
  const RunEnvironment& env;
  std::vector<HostTier> tiers;  // where host KV may go (env's, else plain local DRAM)
  ThreadPool& host_pool;        // the strategies' CPU side
  // A model that only observes (validate-model, run --platform in measure mode) is reported
  // next to the measurement under this platform name; "" otherwise.
  std::string side_platform;
  // Each model's KV budget (kv_budgets(), by the model as the spec names it): the accelerator's
  // capacity for that model's points. A model not listed gets spec.accelerator as it is.
  std::map<std::string, int64_t> kv_budget_bytes = {};
};

struct Contender {
  std::string name;
  std::unique_ptr<Accelerator> accelerator;
  std::unique_ptr<Strategy> strategy;
  reports::Point point;
  std::vector<double> samples;
  std::map<std::string, std::vector<double>> phases;
  // A model observing a measured run (StepModel::replace = false): its price of each timed step.
  std::vector<double> modeled;
  std::map<std::string, std::vector<double>> modeled_phases;
  std::string modeled_overlap;
  Traffic traffic_sum;
  AccuracyAccumulator accuracy;
  StoppingRules stop;
  int64_t first_timed_ns = 0;
  bool active = false;
  int scored = 0;
  int pass = 0;  // replays of the decode positions so far (--max-samples)
  Contender(const Problem& p, const SweepSpec& spec) : accuracy(p), stop(spec) {}
};

// Makes the accelerator and strategy `name`, plans and loads it on `problem`; active when that
// worked, else failed with the plan's status, "oom" (memory ran out: hb::CapacityError) or
// "error". `loading` is called once the strategy exists, before its plan.
std::unique_ptr<Contender> start_contender(const SweepContext& ctx, const Problem& problem,
                                           const std::string& name, reports::PointAxes axes,
                                           const std::function<void()>& loading);

// --max-samples: an active contender whose decode positions ran out starts them again: a fresh
// accelerator and strategy, planned and loaded (untimed) on the same problem, keeping its
// samples, stopping rules and accuracy (replays are timed, not scored; the trajectory stays the
// first pass's). A reload that fails finishes the point on what it has (max-steps).
void replay(Contender& c, const SweepContext& ctx, const Problem& problem);

// Stops an active contender: its point gets the timed steps, phases, traffic, accuracy and
// (side platform) the modeled figures, with `stop_reason`.
void finish(Contender& c, reports::StopReason stop_reason, const std::string& platform);
void fail(Contender& c, reports::PointStatus status, const std::string& reason);

// A measured point's provenance: emulated when its accelerator is (the cpu accelerator) or when
// any of its memory regions lives on an emulated tier (a remote node standing in for CXL, with
// a real GPU too): its figures are then this machine's stand-in's, not the tier's. measured
// otherwise. (A model that replaces the timing makes the point modeled; label_point.)
reports::Provenance provenance_of(const AcceleratorInfo& accelerator,
                                  const std::vector<MemoryRegion>& regions);

// Point::modeled's error from the two medians as they stand now.
void update_model_error(reports::Point& p);

}  // namespace hb::run
