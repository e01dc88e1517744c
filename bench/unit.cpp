#include "bench/unit.h"

#include <memory>

#include "core/model_presets.h"
#include "reports/layer_stack.h"
#include "bench/accuracy.h"
#include "bench/kv_budget.h"
#include "bench/layer_scope.h"
#include "bench/layer_stack.h"
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

// Every contender of a unit: [lane][strategy], in sweep order; with run --layers N each lane's
// strategies are followed by their N-layer stacks, in the same order.
using UnitContenders = std::vector<std::vector<std::unique_ptr<Contender>>>;

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

// Starts every strategy on the unit's problem in `lane` (load = false: planned only), then, with
// `stack` layers (run --layers), every strategy's stack; the first accelerator had is the
// report's.
std::vector<std::unique_ptr<Contender>> start_contenders(
    SweepRun& run, const SweepContext& lane, const Problem& problem, const SweepGroup& g,
    const std::string& workload, const std::string& where, bool load,
    const std::vector<std::vector<Workload>>& stack) {
  const ModelPreset& preset = run.ctx.spec.model(g.model);
  std::vector<std::span<const Workload>> layers(stack.begin(), stack.end());
  std::vector<std::unique_ptr<Contender>> cs;
  for (bool stacked : {false, true}) {
    if (stacked && layers.empty()) break;
    const std::string tag = stacked ? " x" + std::to_string(layers.size() + 1) + " layers" : "";
    for (const auto& name : run.sweep.strategies) {
      auto c = start_contender(
          lane, problem, name, point_axes(run.ctx.spec, preset, g, name, workload, ""),
          [&] { run.tell(where + ": " + name + tag + (load ? " loading" : " planning")); }, load,
          stacked ? layers : std::vector<std::span<const Workload>>{});
      if (!run.context_accel_set && c->accelerator) {
        run.report.context.accelerator = c->accelerator->info();
        run.context_accel_set = true;
      }
      cs.push_back(std::move(c));
    }
  }
  return cs;
}

// Folds each stack of `lane` (after its `strategies` one-layer contenders, start_contenders) into
// its strategy's point (Point::layer_stack) and drops it: the lane then holds the points alone.
void fold_stacks(std::vector<std::unique_ptr<Contender>>& lane, size_t strategies) {
  for (size_t i = strategies; i < lane.size(); ++i) {
    const reports::Point& from = lane[i]->point;
    reports::Point& into = lane[i - strategies]->point;
    reports::LayerStackFigures& s = into.layer_stack;
    s.layers = lane[i]->layers();
    s.scored_layer = 0;  // the stack's layer 0 runs the point's own workloads
    s.status = from.status;
    s.reason = from.reason;
    s.step = from.step;
    s.phases = from.phases;
    reports::update_shortcut_error(into);
  }
  lane.resize(strategies);
}

// The unit's problem over `workloads` (a view: they must outlive it), made once for every lane.
Problem make_problem(const SweepRun& run, const SweepGroup& g, const AttentionShape& shape,
                     const std::vector<Workload>& workloads) {
  Problem problem;
  problem.shape = shape;
  problem.batch = g.batch;
  problem.page_tokens = run.ctx.spec.page_tokens;
  problem.workloads = workloads;
  problem.kv_budget_tokens = g.kv_budget ? g.kv_budget->tokens_at(g.seq_len) : 0;
  return problem;
}

// For each lane and strategy, the lane whose contender executes it: the first lane with the
// same plan_signature (itself when none; always itself with one lane or a failed plan).
std::vector<std::vector<size_t>> leader_lanes(const UnitContenders& cs) {
  std::vector<std::vector<size_t>> leader(cs.size());
  std::vector<std::vector<std::string>> sig(cs.size());
  for (size_t l = 0; l < cs.size(); ++l)
    for (size_t i = 0; i < cs[l].size(); ++i) {
      sig[l].push_back(cs.size() > 1 ? plan_signature(*cs[l][i]) : "");
      leader[l].push_back(l);
      if (!cs[l][i]->planned) continue;
      for (size_t e = 0; e < l; ++e)
        if (cs[e][i]->planned && sig[e][i] == sig[l][i]) {
          leader[l][i] = e;
          break;
        }
    }
  return leader;
}

}  // namespace

// Modeled timings: stepping the strategies side by side buys no fairness. One at a time, a single
// strategy's KV is in memory and the next one's load reuses its pages (host_allocator keeps
// released blocks), which spares faulting fresh memory in: most of a long-context model run on a
// VM.
bool timings_modeled(const SweepRun& run) {
  for (const auto& lane : run.lanes)
    if (!lane.env.model || !lane.env.model->replace) return false;
  return true;
}

int stands_for_batch(const SweepRun& run, const SweepGroup& g) {
  const BatchSampler* sampler = run.ctx.env.sampler.get();
  return sampler ? sampler->stands_for(run.ctx.spec, g.batch) : 1;
}

namespace {

// The inputs of a unit executing group `executed`: the previous unit's when they are the same
// (UnitInputs), else made now (the previous ones freed first: a long context's are GiBs).
const UnitInputs& unit_inputs(SweepRun& run, const SweepGroup& executed,
                              const AttentionShape& shape, bool stacked, const std::string& where) {
  const SweepSpec& spec = run.ctx.spec;
  // A stack's layers are drawn for the group's own batch: not shared.
  const std::string key = stacked ? "" : unit_key(0, executed, RunEnvironment{});
  if (run.last_inputs && !key.empty() && run.last_inputs->key == key) {
    run.tell(where + ": the previous unit's workload and reference");
    return *run.last_inputs;
  }
  run.last_inputs.reset();
  run.tell(where + ": generating workload");
  auto in = std::make_shared<UnitInputs>();
  in->key = key;
  in->workloads = make_workloads(spec, run.resolved.workload, shape, executed.seq_len,
                                 executed.batch, spec.seed);
  in->problem = make_problem(run, executed, shape, in->workloads);
  // Every step's reference is kept when the strategies do not step side by side.
  in->oracle = std::make_unique<ReferenceOracle>(in->problem, ThreadPool::global(),
                                                 run.lanes.size() > 1 || timings_modeled(run));
  run.last_inputs = std::move(in);
  return *run.last_inputs;
}

// Each lane with one of `batch` sequences' share of its KV budget and host tiers
// (stands_for_batch).
std::vector<SweepContext> sequence_share(const std::vector<SweepContext>& lanes, int batch) {
  std::vector<SweepContext> out;
  for (const SweepContext& lane : lanes) {
    SweepContext c = lane;
    c.stands_for = batch;
    c.env.sampler->share(c.spec, batch, c.kv_budget_bytes, c.tiers);
    out.push_back(std::move(c));
  }
  return out;
}

// Steps the executing contenders side by side, round after round (rounds.h), until the group
// stops (round_close.h): false when a stop was requested (the unit is then dropped: its points
// are incomplete). The unit's label seeds the rounds' orders (round_seed).
bool step_unit(SweepRun& run, const std::vector<Contender*>& cs, const Problem& problem,
               ReferenceOracle& oracle, const std::string& where) {
  const SweepSpec& spec = run.ctx.spec;
  const int steps = spec.decode_steps;
  const RoundPlan plan(steps, spec.stop.warmup_steps, spec.stop.rounds);
  const uint64_t seed = round_seed(spec.seed, where);
  // Modeled timings have no noise to pair away: one pass's rounds are enough.
  const int min_rounds = timings_modeled(run) ? plan.rounds_per_pass() : spec.stop.rounds;
  int rounds_done = 0;
  std::vector<size_t> order = round_order(cs.size(), seed, rounds_done);
  StepResult out;  // every contender's step in turn, its memory kept (step_round)
  // One pass over the decode positions, then replays of them (strategies reloaded untimed)
  // while the group has not stopped.
  for (int pass = 0;; ++pass) {
    if (pass > 0 && min_rounds == plan.rounds_per_pass() && timings_modeled(run)) {
      // Modeled steps are the same on a replay: the positions are all there is to price.
      finish_group(cs, reports::StopReason::max_steps);
      break;
    }
    if (pass > 0) {
      bool any_left = false;
      for (Contender* c : cs)
        if (c->executing()) {
          replay(*c, problem);
          any_left |= c->executing();
        }
      if (!any_left) break;
    }
    const std::string of_pass = pass > 0 ? " (replay " + std::to_string(pass) + ")" : "";
    for (int s = 0; s < steps; ++s) {
      // Between steps, not inside one.
      if (run.stop_requested()) {
        run.stopped = true;
        return false;
      }
      if (!step_round(cs, order, oracle, s, out)) return true;  // every contender failed
      run.tell(where + ": round " + std::to_string(rounds_done + 1) + ", step " +
               std::to_string(s + 1) + "/" + std::to_string(steps) + of_pass);
      if (!plan.ends_round(s)) continue;
      if (close_round(cs, order, ++rounds_done, min_rounds)) return true;
      order = round_order(cs.size(), seed, rounds_done);
    }
  }
  return true;
}

// Wave w of a unit: lane w's contenders that execute (loaded now unless already), each followed
// by the later lanes' contenders that share its plan; one that cannot follow (follow()) executes
// in its own lane's wave. The wave's strategies step side by side (one at a time when timings are
// modeled) and are freed before the next wave. False when a stop was requested.
bool run_wave(SweepRun& run, UnitContenders& cs, std::vector<std::vector<size_t>>& leader, size_t w,
              const Problem& problem, ReferenceOracle& oracle, const std::string& where) {
  const bool one_at_a_time = timings_modeled(run);
  std::vector<Contender*> executing;
  auto step_and_free = [&] {
    const bool finished = executing.empty() || step_unit(run, executing, problem, oracle, where);
    for (Contender* c : executing) {
      c->strategy.reset();
      c->accelerator.reset();
      for (Contender* f : c->followers) f->accelerator.reset();
    }
    executing.clear();
    return finished;
  };
  for (size_t i = 0; i < cs[w].size(); ++i) {
    if (leader[w][i] != w) continue;
    Contender& c = *cs[w][i];
    if (c.planned) {
      run.tell(where + ": " + c.name + " loading");
      load_contender(c);
    }
    if (c.active) executing.push_back(&c);
    for (size_t l = w + 1; l < cs.size(); ++l)
      if (leader[l][i] == w && !follow(c, *cs[l][i])) leader[l][i] = l;
    if (one_at_a_time && !step_and_free()) return false;
  }
  return step_and_free();
}

}  // namespace

// Runs one unit (every strategy on one workload group, side by side; with several lanes, wave
// after wave) until every contender stopped: its points, lane by lane, each lane's in sweep
// order; nothing when a stop was requested.
std::optional<std::vector<reports::Point>> run_unit(SweepRun& run, const SweepGroup& g,
                                                    const std::string& where) {
  const SweepSpec& spec = run.ctx.spec;
  AttentionShape shape = spec.model(g.model).shape;
  shape.kv_dtype = g.kv_dtype;
  const int stands_for = stands_for_batch(run, g);
  SweepGroup executed = g;
  executed.batch = g.batch / stands_for;
  const std::vector<SweepContext> shares =
      stands_for > 1 ? sequence_share(run.lanes, stands_for) : std::vector<SweepContext>{};
  const std::vector<SweepContext>& lane_ctx = stands_for > 1 ? shares : run.lanes;
  const auto stack = stack_workloads(run.resolved, shape, g);  // run --layers N: layers 1..N-1
  const UnitInputs& in = unit_inputs(run, executed, shape, !stack.empty(), where);
  const Problem& problem = in.problem;
  ReferenceOracle& oracle = *in.oracle;
  const size_t lanes = run.lanes.size();
  const bool one_at_a_time = timings_modeled(run);
  const std::string workload = run.resolved.workload_label();
  // Planned only, loaded wave by wave, when there are several lanes or they load one at a time.
  const bool load_now = lanes == 1 && !one_at_a_time;
  UnitContenders cs;
  for (size_t l = 0; l < lanes; ++l)
    cs.push_back(start_contenders(run, lane_ctx[l], problem, executed, workload,
                                  where + run.lane_tag(l), load_now, stack));
  std::vector<std::vector<size_t>> leader = leader_lanes(cs);
  for (size_t w = 0; w < lanes; ++w)
    if (!run_wave(run, cs, leader, w, problem, oracle, where + run.lane_tag(w)))
      return std::nullopt;
  std::vector<reports::Point> points;
  for (auto& lane : cs) {
    for (auto& c : lane) {
      c->strategy.reset();
      c->accelerator.reset();
    }
    fold_stacks(lane, run.sweep.strategies.size());
    for (auto& c : lane) {
      if (stands_for > 1) run.ctx.env.sampler->stand_for(c->point, spec, stands_for);
      points.push_back(std::move(c->point));
    }
  }
  return points;
}

}  // namespace hb::bench
