#include "model/model_sweep.h"

#include <algorithm>
#include <utility>

#include "core/error.h"
#include "core/model_presets.h"
#include "model/sampled_batch.h"
#include "model/shared_execution.h"
#include "model/tensor_parallel.h"

namespace hb::model {

namespace {

// A unit's contenders: [lane][strategy], in sweep order.
using UnitContenders = std::vector<std::vector<PricedContender>>;

// For each lane and strategy, the lane whose contender executes it: the first lane with the
// same plan_signature (itself when none; always itself with one lane or a failed plan).
std::vector<std::vector<size_t>> leader_lanes(const UnitContenders& cs) {
  std::vector<std::vector<size_t>> leader(cs.size());
  std::vector<std::vector<std::string>> sig(cs.size());
  for (size_t l = 0; l < cs.size(); ++l)
    for (size_t i = 0; i < cs[l].size(); ++i) {
      sig[l].push_back(cs.size() > 1 ? plan_signature(*cs[l][i].c) : "");
      leader[l].push_back(l);
      if (!cs[l][i].c->planned) continue;
      for (size_t e = 0; e < l; ++e)
        if (cs[e][i].c->planned && sig[e][i] == sig[l][i]) {
          leader[l][i] = e;
          break;
        }
    }
  return leader;
}

// Plans every strategy of the unit on `lane` (each loads later, in its turn), labelled and priced
// by the lane's pricer; a model the lane refuses fails "oom" before its plan. The first
// accelerator had is the report's.
// A lane's setting for one unit: its pricer, and why nothing runs ("" when it does).
struct LaneUnit {
  const StepPricer* pricer = nullptr;
  std::string refused;
};

std::vector<PricedContender> start_lane(bench::SweepRun& run, const LaneUnit& lane,
                                        const bench::SweepContext& ctx, const Problem& problem,
                                        const bench::SweepGroup& executed, int batch,
                                        const std::string& where) {
  const bench::SweepSpec& spec = ctx.spec;
  const ModelPreset& preset = spec.model(executed.model);
  const std::string workload = run.resolved.workload_label();
  const bool refused = !lane.refused.empty();
  std::vector<PricedContender> cs;
  for (const auto& name : run.sweep.strategies) {
    auto c = bench::start_contender(
        ctx, problem, name, bench::point_axes(spec, preset, executed, name, workload, ""),
        [&] {
          if (refused) throw CapacityError(lane.refused);
          run.tell(where + ": " + name + " planning");
        },
        false);
    lane.pricer->label(c->point);
    std::unique_ptr<bench::StepObserver::PointRecord> priced;
    if (refused)
      c->point.kv_fit_fraction = 0;  // no room for KV at all, whatever the budget's floor says
    else if (c->strategy)            // planned (its plan may have failed)
      priced = lane.pricer->observe(c->point, *c->strategy, batch);
    if (!run.context_accel_set && c->accelerator) {
      run.report.context.accelerator = c->accelerator->info();
      run.context_accel_set = true;
    }
    cs.push_back({std::move(c), std::move(priced)});
  }
  return cs;
}

// Lane w's strategies that execute, one at a time (loaded now), each recorded by the later
// lanes' contenders that share its plan; one that cannot follow (follow()) executes in its own
// lane's turn. Each is freed before the next loads. False when a stop was requested.
bool run_lane(bench::SweepRun& run, UnitContenders& cs, std::vector<std::vector<size_t>>& leader,
              size_t w, bench::ReferenceOracle& oracle, const std::string& where) {
  for (size_t i = 0; i < cs[w].size(); ++i) {
    if (leader[w][i] != w) continue;
    bench::Contender& c = *cs[w][i].c;
    if (c.planned) {
      run.tell(where + ": " + c.point.axes.strategy + " loading");
      bench::load_contender(c);
    }
    SharedExecution e{&cs[w][i], {}};
    for (size_t l = w + 1; l < cs.size(); ++l)
      if (leader[l][i] == w && !follow(e, cs[l][i])) leader[l][i] = l;
    if (c.active && !run_execution(run, e, oracle, where)) return false;
    c.strategy.reset();
    c.accelerator.reset();
    for (PricedContender* f : e.followers) f->c->accelerator.reset();
  }
  return true;
}

// The deployment of a unit's model on a lane with a platform (model/tensor_parallel.h): for
// the context the unit ends its decode steps at.
Deployment deployment_of(const Lane& lane, const bench::SweepSpec& spec,
                         const bench::SweepGroup& g) {
  return choose_deployment(*lane.platform, spec.model(g.model), g.seq_len + spec.decode_steps,
                           g.batch, lane.request);
}

LaneUnit lane_unit(const Lane& lane, const bench::SweepSpec& spec, const bench::SweepGroup& g) {
  const ModelPreset& preset = spec.model(g.model);
  if (!lane.platform || preset.layers <= 0) {
    const auto r = lane.refused.find(g.model);
    return {lane.pricer.get(), r == lane.refused.end() ? "" : r->second};
  }
  const Deployment d = deployment_of(lane, spec, g);
  return {&lane.pricer_for(d, preset.hidden),
          d.refused.empty() ? ""
                            : d.refused + ": nothing of the model runs there (a node with more " +
                                  "accelerator memory, fp8 weights, or a smaller model)"};
}

}  // namespace

const StepPricer& Lane::pricer_for(const Deployment& d, int hidden) const {
  const std::string key = d.text() + " " + d.choice + " " + std::to_string(hidden);
  auto& p = deployed[key];
  if (!p) {
    PricerOptions o = pricer_options;
    o.deployment = d;
    o.hidden = hidden;
    p = make_step_pricer(*platform, std::move(o));
  }
  return *p;
}

ModelSweep::ModelSweep(std::vector<Lane> lanes, const bench::RunEnvironment& env)
    : lanes_(std::move(lanes)) {
  for (const Lane& l : lanes_) {
    bench::RunEnvironment e = env;
    e.host_tiers = l.host_tiers;
    e.host_tiers = bench::host_tiers(e);
    e.observer = nullptr;  // the lane's pricer observes (run)
    envs_.push_back(std::move(e));
  }
}

std::string ModelSweep::unit_key(int pass, const bench::SweepGroup& g) const {
  std::string k = bench::unit_key(pass, g);
  // The same groups run once per platform; the platforms tell them apart.
  for (const Lane& l : lanes_)
    for (const auto& [key, value] : l.pricer->lane_axes()) k += ";" + key + "=" + value;
  return k;
}

double ModelSweep::point_cost(const bench::SweepRun& run, const bench::SweepGroup& g) const {
  const int batch = executed_batch(run.ctx.spec, g.batch);
  size_t running = 0;
  for (const Lane& lane : lanes_) running += lane.refused.count(g.model) ? 0 : 1;
  const double tokens = static_cast<double>(std::max<int64_t>(g.seq_len, 1)) * std::max(batch, 1);
  return tokens * static_cast<double>(running) /
         static_cast<double>(std::max<size_t>(lanes_.size(), 1));
}

std::string ModelSweep::lane_tag(size_t l) const {
  if (lanes_.size() < 2) return "";
  std::string t;
  for (const auto& [key, value] : lanes_[l].pricer->lane_axes()) t += " [" + value + "]";
  return t;
}

// The previous unit's inputs when it executed the same sequences (a sampled batch executes the
// same one at every batch of a length), else made now (the previous ones freed first: a long
// context's are GiBs). Every step's reference is kept: the lanes step one after another.
const bench::UnitInputs& ModelSweep::inputs(bench::SweepRun& run, const bench::SweepGroup& executed,
                                            const std::string& where) {
  const std::string key = bench::unit_key(0, executed);
  if (last_inputs_ && last_inputs_->key == key) {
    run.tell(where + ": the previous unit's workload and reference");
    return *last_inputs_;
  }
  last_inputs_.reset();
  run.tell(where + ": generating workload");
  last_inputs_ = bench::make_unit_inputs(run.resolved, executed, true);
  last_inputs_->key = key;
  return *last_inputs_;
}

std::optional<std::vector<reports::Point>> ModelSweep::run(bench::SweepRun& run,
                                                           const bench::SweepGroup& g,
                                                           const std::string& where) {
  const bench::SweepSpec& spec = run.ctx.spec;
  const int batch = stands_for(spec, g.batch);
  bench::SweepGroup executed = g;
  executed.batch = g.batch / batch;
  std::vector<bench::SweepContext> ctxs;  // each lane's, for one of the batch's sequences
  // Each lane's step times: an adaptive strategy adapts to its lane's platform (and so executes
  // on each lane, plan_signature telling its lanes apart by them).
  std::vector<std::unique_ptr<StepTimeSource>> times;
  std::vector<LaneUnit> units;
  for (size_t l = 0; l < lanes_.size(); ++l) {
    units.push_back(lane_unit(lanes_[l], spec, g));
    times.push_back(units.back().pricer->step_times(batch));
    bench::SweepContext c{spec,
                          envs_[l],
                          envs_[l].host_tiers,
                          run.ctx.host_pool,
                          run.ctx.kv_budget_bytes,
                          times.back().get()};
    for (const auto& [m, bytes] : lanes_[l].kv_budget_bytes) c.kv_budget_bytes[m] = bytes;
    if (const Lane& lane = lanes_[l]; lane.platform && spec.model(g.model).layers > 0)
      c.kv_budget_bytes[g.model] = executed_kv_budget_per_layer(*lane.platform, spec.model(g.model),
                                                                deployment_of(lane, spec, g));
    if (batch > 1) share_of_one(spec, batch, c.kv_budget_bytes, c.tiers);
    ctxs.push_back(std::move(c));
  }
  const bench::UnitInputs& in = inputs(run, executed, where);
  UnitContenders cs;
  for (size_t l = 0; l < lanes_.size(); ++l)
    cs.push_back(
        start_lane(run, units[l], ctxs[l], in.problem, executed, batch, where + lane_tag(l)));
  std::vector<std::vector<size_t>> leader = leader_lanes(cs);
  for (size_t w = 0; w < lanes_.size(); ++w)
    if (!run_lane(run, cs, leader, w, *in.oracle, where + lane_tag(w))) return std::nullopt;
  std::vector<reports::Point> points;
  for (auto& lane : cs)
    for (auto& [c, priced] : lane) {
      c->strategy.reset();
      c->accelerator.reset();
      if (batch > 1) stand_for(c->point, spec, batch);
      points.push_back(std::move(c->point));
    }
  return points;
}

}  // namespace hb::model
