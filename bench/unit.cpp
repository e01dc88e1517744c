#include "bench/unit.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "core/model_presets.h"
#include "reports/layer_stack.h"
#include "bench/accuracy.h"
#include "bench/kv_budget.h"
#include "bench/layer_scope.h"
#include "bench/layer_stack.h"
#include "bench/machine_control.h"
#include "bench/round_close.h"
#include "bench/rounds.h"
#include "bench/step_round.h"
#include "bench/trace.h"

namespace hb::bench {

namespace {

// The batch's workloads, sequence b seeded seed + 7919 b (seed: --seed, or a stack layer's,
// layer_workload_seed). A trace is one sequence: the batch repeats it.
std::vector<Workload> make_workloads(const SweepSpec& spec, const SweepWorkload& workload,
                                     const AttentionShape& shape, int64_t seq_len, int batch,
                                     uint64_t seed) {
  std::vector<Workload> ws;
  if (const auto* trace = std::get_if<std::shared_ptr<const TraceFile>>(&workload)) {
    Workload w = (*trace)->workload(shape, seq_len, spec.decode_steps);
    for (int b = 1; b < batch; ++b) ws.push_back(w);
    ws.push_back(std::move(w));
    return ws;
  }
  WorkloadSpec ws_spec = std::get<WorkloadSpec>(workload);
  for (int b = 0; b < batch; ++b) {
    ws_spec.seed = seed + static_cast<uint64_t>(b) * 7919;
    ws.push_back(make_workload(shape, seq_len, spec.decode_steps, ws_spec));
  }
  return ws;
}

// run --layers N: the workloads of a stack's layers 1..N-1 (layer 0 runs the unit's own), made
// once per unit and shared, read-only, by every strategy's stack.
std::vector<std::vector<Workload>> stack_workloads(const ResolvedSweep& sweep,
                                                   const AttentionShape& shape,
                                                   const SweepGroup& g) {
  const SweepSpec& spec = sweep.spec;
  std::vector<std::vector<Workload>> out;
  for (int layer = 1; layer < spec.layers; ++layer)  // synthetic only (check_layers)
    out.push_back(make_workloads(spec, sweep.workload, shape, g.seq_len, g.batch,
                                 layer_workload_seed(spec.seed, layer)));
  return out;
}

// A unit's contenders, and the observer's record of each (RunEnvironment::observer: run --platform
// and validate-model price the measured steps beside them; null: no observer, or a stack).
struct UnitContenders {
  std::vector<std::unique_ptr<Contender>> cs;
  std::vector<std::unique_ptr<StepObserver::PointRecord>> observed;
};

// Starts every strategy on the unit's problem, then, with `stack` layers (run --layers), every
// strategy's stack; the observer sees each one-layer plan before its load. The first accelerator
// had is the report's.
UnitContenders start_contenders(SweepRun& run, const Problem& problem, const SweepGroup& g,
                                const std::string& where,
                                const std::vector<std::vector<Workload>>& stack) {
  const SweepSpec& spec = run.ctx.spec;
  const ModelPreset& preset = spec.model(g.model);
  const std::string workload = run.resolved.workload_label();
  const StepObserver* observer = run.ctx.env.observer.get();
  std::vector<std::span<const Workload>> layers(stack.begin(), stack.end());
  UnitContenders u;
  for (bool stacked : {false, true}) {
    if (stacked && layers.empty()) break;
    const std::string tag = stacked ? " x" + std::to_string(layers.size() + 1) + " layers" : "";
    for (const auto& name : run.sweep.strategies) {
      auto c = start_contender(
          run.ctx, problem, name, point_axes(spec, preset, g, name, workload, ""),
          [&] { run.tell(where + ": " + name + tag + " loading"); }, false,
          stacked ? layers : std::vector<std::span<const Workload>>{});
      std::unique_ptr<StepObserver::PointRecord> record;
      if (observer && !stacked && c->strategy) record = observer->observe(c->point, *c->strategy);
      load_contender(*c);
      if (!run.context_accel_set && c->accelerator) {
        run.report.context.accelerator = c->accelerator->info();
        run.context_accel_set = true;
      }
      u.cs.push_back(std::move(c));
      u.observed.push_back(std::move(record));
    }
  }
  return u;
}

// Folds each stack of `cs` (after its `strategies` one-layer contenders, start_contenders) into
// its strategy's point (Point::layer_stack) and drops it: cs then holds the points alone.
void fold_stacks(std::vector<std::unique_ptr<Contender>>& cs, size_t strategies) {
  for (size_t i = strategies; i < cs.size(); ++i) {
    const reports::Point& from = cs[i]->point;
    reports::Point& into = cs[i - strategies]->point;
    reports::LayerStackFigures& s = into.layer_stack;
    s.layers = cs[i]->layers();
    s.scored_layer = 0;  // the stack's layer 0 runs the point's own workloads
    s.status = from.status;
    s.reason = from.reason;
    s.step = from.step;
    s.phases = from.phases;
    reports::update_shortcut_error(into);
  }
  cs.resize(strategies);
}

// Before a replay of the decode positions: reloads (untimed) every contender still active. False
// when none is left.
bool start_replay(const std::vector<Contender*>& cs, const Problem& problem) {
  bool any_left = false;
  for (Contender* c : cs)
    if (c->active) {
      replay(*c, problem);
      any_left |= c->active;
    }
  return any_left;
}

// Steps the active contenders side by side, round after round (rounds.h), one pass over the
// decode positions and then replays of it, until the group stops (round_close.h): false when a
// stop was requested (the unit is then dropped: its points are incomplete). The unit's label
// seeds the rounds' orders (round_seed).
bool step_unit(SweepRun& run, const std::vector<Contender*>& cs,
               const std::vector<StepObserver::PointRecord*>& observed, const Problem& problem,
               ReferenceOracle& oracle, const std::string& where, MachineControl& control) {
  const SweepSpec& spec = run.ctx.spec;
  const int steps = spec.decode_steps;
  const RoundPlan plan(steps, spec.stop.warmup_steps, spec.stop.rounds);
  const uint64_t seed = round_seed(spec.seed, where);
  int rounds_done = 0;
  std::vector<size_t> order = round_order(cs.size(), seed, rounds_done);
  control.set_slot(MachineControl::slot_of(cs.size(), seed, rounds_done));
  StepResult out;  // every contender's step in turn, its memory kept (step_round)
  for (int pass = 0; pass == 0 || start_replay(cs, problem); ++pass) {
    const std::string of_pass = pass > 0 ? " (replay " + std::to_string(pass) + ")" : "";
    for (int s = 0; s < steps; ++s) {
      if (run.stop_requested()) {  // between steps, not inside one
        run.stopped = true;
        return false;
      }
      if (!step_round(cs, order, observed, oracle, s, out, &control)) return true;  // all failed
      run.tell(where + ": round " + std::to_string(rounds_done + 1) + ", step " +
               std::to_string(s + 1) + "/" + std::to_string(steps) + of_pass);
      if (!plan.ends_round(s)) continue;
      control.close_round();
      if (close_round(cs, order, ++rounds_done)) return true;
      order = round_order(cs.size(), seed, rounds_done);
      control.set_slot(MachineControl::slot_of(cs.size(), seed, rounds_done));
    }
  }
  return true;
}

// The machine control's read: the group's KV bytes, batch x (seq_len + decode_steps) tokens of
// one layer, what a strategy that attends to all of it reads per step.
int64_t control_bytes(const Problem& problem, const SweepSpec& spec) {
  const int64_t seq = problem.workloads.empty() ? 0 : problem.prompt_len();
  return problem.shape.kv_bytes_per_token() * problem.batch * (seq + spec.decode_steps);
}

// Each point with rounds gets the control's time in the same rounds (StepTiming::control_ns);
// a point whose rounds differ from the control's (failed, or of one round) gets none.
void attach_control(std::vector<std::unique_ptr<Contender>>& cs, const std::vector<double>& ns) {
  for (auto& c : cs) {
    reports::StepTiming& t = c->point.step;
    if (c->point.status == reports::PointStatus::ok && t.pass_sizes.size() >= 2 &&
        t.pass_sizes.size() == ns.size())
      t.control_ns = ns;
  }
}

// Seconds a measured group spends per token of context outside its sampling (workload, reference,
// loads): about 0.1 ms on the 2-core VM's default sweep (a 32k group ~3 s beyond its --timeout).
constexpr double kSetupSecondsPerToken = 1e-4;

}  // namespace

std::shared_ptr<UnitInputs> make_unit_inputs(const ResolvedSweep& sweep, const SweepGroup& g,
                                             bool keep_all_references) {
  const SweepSpec& spec = sweep.spec;
  AttentionShape shape = spec.model(g.model).shape;
  shape.kv_dtype = g.kv_dtype;
  auto in = std::make_shared<UnitInputs>();
  in->workloads = make_workloads(spec, sweep.workload, shape, g.seq_len, g.batch, spec.seed);
  Problem& problem = in->problem;  // a view of the workloads, which live beside it
  problem.shape = shape;
  problem.batch = g.batch;
  problem.page_tokens = spec.page_tokens;
  problem.workloads = in->workloads;
  problem.kv_budget_tokens = g.kv_budget ? g.kv_budget->tokens_at(g.seq_len) : 0;
  in->oracle =
      std::make_unique<ReferenceOracle>(in->problem, ThreadPool::global(), keep_all_references);
  return in;
}

std::string MeasuredUnits::unit_key(int pass, const SweepGroup& g) const {
  return bench::unit_key(pass, g);
}

double MeasuredUnits::point_cost(const SweepRun& run, const SweepGroup& g) const {
  const double tokens = static_cast<double>(std::max<int64_t>(g.seq_len, 1)) * std::max(g.batch, 1);
  const double timeout = run.ctx.spec.stop.timeout_s;
  return std::isfinite(timeout) ? timeout + kSetupSecondsPerToken * tokens : tokens;
}

std::optional<std::vector<reports::Point>> MeasuredUnits::run(SweepRun& run, const SweepGroup& g,
                                                              const std::string& where) {
  AttentionShape shape = run.ctx.spec.model(g.model).shape;
  shape.kv_dtype = g.kv_dtype;
  const auto stack = stack_workloads(run.resolved, shape, g);  // run --layers N: layers 1..N-1
  run.tell(where + ": generating workload");
  const std::shared_ptr<UnitInputs> in = make_unit_inputs(run.resolved, g, false);
  auto [cs, observed] = start_contenders(run, in->problem, g, where, stack);
  std::vector<Contender*> active;
  std::vector<StepObserver::PointRecord*> active_observed;
  for (size_t i = 0; i < cs.size(); ++i)
    if (cs[i]->active) {
      active.push_back(cs[i].get());
      active_observed.push_back(observed[i].get());
    }
  MachineControl control(control_bytes(in->problem, run.ctx.spec), run.ctx.host_pool);
  if (!active.empty() &&
      !step_unit(run, active, active_observed, in->problem, *in->oracle, where, control))
    return std::nullopt;
  attach_control(cs, control.round_ns());
  for (size_t i = 0; i < cs.size(); ++i) {
    cs[i]->strategy.reset();
    cs[i]->accelerator.reset();
    // A point that stopped (not failed) gets what the observer adds to its figures.
    if (observed[i] && cs[i]->point.status == reports::PointStatus::ok)
      observed[i]->finish(cs[i]->point);
  }
  fold_stacks(cs, run.sweep.strategies.size());
  std::vector<reports::Point> points;
  for (auto& c : cs) points.push_back(std::move(c->point));
  return points;
}

}  // namespace hb::bench
