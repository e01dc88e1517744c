#pragma once
// One strategy at the point being run, from start to stop (nvbench's state): started
// (accelerator, strategy, plan, load) by start_contender, stepped one round at a time
// (step_round.h), then finished (timing, accuracy; stop reason) or failed (status and reason, no
// accuracy figures).
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/strategy.h"
#include "core/thread_pool.h"
#include "reports/report.h"
#include "bench/accuracy.h"
#include "bench/run_environment.h"
#include "bench/sweep_spec.h"
#include "bench/stopping_rules.h"

namespace hb::bench {

// What every contender of a sweep shares.
struct SweepContext {
  const SweepSpec& spec;
  const RunEnvironment& env;
  std::vector<HostTier> tiers;  // where host KV may go (env's, else plain local DRAM)
  ThreadPool& host_pool;        // the strategies' CPU side
  // Each model's KV budget (kv_budgets(), by the model as the spec names it): the accelerator's
  // capacity for that model's points. A model not listed gets spec.accelerator as it is.
  std::map<std::string, int64_t> kv_budget_bytes = {};
  // What adaptive strategies balance on (core/step_times.h); null: the wall clock (measured).
  const StepTimeSource* step_times = nullptr;
};

// Interleaved rounds (rounds.h) as one contender took them: the timed steps of each finished
// round, its place in each round's order, and where the round in progress began in its samples.
struct RoundLog {
  std::vector<int64_t> sizes;
  std::vector<int> slots;
  size_t begin = 0;
};

// The timed steps of pass 0 (the first replay of the decode positions): the exact traffic a
// deterministic strategy must repeat in any run (Point::first_pass_traffic).
struct FirstPass {
  Traffic traffic;
  int steps = 0;
};

// Its strategy's name and role are its point's (point.axes.strategy, point.role).
struct Contender {
  const SweepContext* ctx = nullptr;  // spec, tiers, KV budget
  std::unique_ptr<Accelerator> accelerator;
  std::unique_ptr<Strategy> strategy;
  bool planned = false;  // planned ok, not loaded yet (start_contender load = false)
  reports::Point point;
  std::vector<double> samples;
  std::map<std::string, std::vector<double>> phases;
  Traffic traffic_sum;
  FirstPass first_pass;
  AccuracyAccumulator accuracy;
  StoppingRules stop;
  int64_t first_timed_ns = 0;
  bool active = false;
  int pass = 0;  // replays of the decode positions so far (--max-samples)
  RoundLog rounds;
  // run --layers N (bench/layer_stack.h): the workloads of layers 1..N-1 when this contender
  // steps its strategy as an N-layer stack beside the one-layer contender of the same strategy
  // (empty: one layer, a point of its own). A stack is timed, never scored or priced, is left
  // out of the headline's pairs, and ends folded into that point (Point::layer_stack).
  std::vector<std::span<const Workload>> stack_layers;
  Contender(const Problem& p, const SweepSpec& spec, std::vector<std::span<const Workload>> stack)
      : accuracy(p), stop(spec, stack.empty()), stack_layers(std::move(stack)) {}
  bool stack() const { return !stack_layers.empty(); }
  int layers() const { return static_cast<int>(stack_layers.size()) + 1; }
};

// Makes the accelerator and strategy `name`, plans and loads it on `problem`; active when that
// worked, else failed with the plan's status, "oom" (memory ran out: hb::CapacityError) or
// "error". `loading` is called once the strategy exists, before its plan.
// load = false stops after an ok plan (`planned`): load_contender finishes the start later.
// With `stack_layers` (run --layers) the strategy is a stack of that many layers plus one
// (Contender::stack_layers), on an accelerator with that many per-layer budgets.
std::unique_ptr<Contender> start_contender(
    const SweepContext& ctx, const Problem& problem, const std::string& name,
    reports::PointAxes axes, const std::function<void()>& loading, bool load = true,
    std::vector<std::span<const Workload>> stack_layers = {});
void load_contender(Contender& c);

// --max-samples: an active contender whose decode positions ran out starts them again: a fresh
// accelerator and strategy, planned and loaded (untimed) on the same problem; it keeps its
// samples, stopping rules and accuracy (replays are timed, not scored; the trajectory stays the
// first pass's). A reload that fails finishes the point on what it has (max-steps).
void replay(Contender& c, const Problem& problem);

// Stops an active contender: its point gets the timed steps, phases, traffic and accuracy, with
// `stop_reason`, and its strategy's trajectory (when it has one: a caller recording another's
// steps sets it).
void finish(Contender& c, reports::StopReason stop_reason);
void fail(Contender& c, reports::PointStatus status, const std::string& reason);

// A measured point's provenance: emulated when its accelerator is (the cpu accelerator) or when
// any of its memory regions lives on an emulated tier (a remote node standing in for CXL, with
// a real GPU too): its figures are then this machine's stand-in's, not the tier's. measured
// otherwise. (Model mode labels its points modeled: model::StepPricer::label.)
reports::Provenance provenance_of(const AcceleratorInfo& accelerator,
                                  const std::vector<MemoryRegion>& regions);

// Point::modeled's error from the two medians as they stand now.
void update_model_error(reports::Point& p);

}  // namespace hb::bench
