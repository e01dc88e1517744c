#include "model/shared_execution.h"

#include <set>
#include <utility>

#include "core/error.h"
#include "bench/round_close.h"
#include "bench/rounds.h"
#include "bench/step_round.h"

namespace hb::model {

std::string plan_signature(const bench::Contender& c) {
  const reports::Point& p = c.point;
  // Parameters that echo the capacity a strategy was given rather than a decision drawn from
  // it (HybridGen reports its accelerator budget next to the window, hot slots and shipped rows
  // it sizes with it): two capacities that lead to the same decisions execute alike.
  static const std::set<std::string> kCapacityEchoes = {"accelerator_budget_bytes"};
  std::string s = std::to_string(static_cast<int>(p.status)) + (c.planned ? " planned" : "") +
                  "\n" + p.reason + "\n";
  for (const auto& w : p.warnings) s += "warning " + w + "\n";
  for (const auto& [k, v] : p.strategy_params)
    if (k.rfind("model.", 0) != 0 && !kCapacityEchoes.count(k)) s += k + "=" + v + "\n";
  // The first host tier is where every strategy keeps its host KV by default; one that places
  // KV on another names it in its parameters (HybridGen's k_tier, v_tier, kv_tier).
  if (!c.ctx->tiers.empty()) s += "tier " + c.ctx->tiers[0].location.to_string() + "\n";
  return s;
}

std::vector<PricedContender*> SharedExecution::recorders() const {
  std::vector<PricedContender*> out;
  if (leader->c->active) out.push_back(leader);
  for (PricedContender* f : followers)
    if (f->c->active) out.push_back(f);
  return out;
}

bool follow(SharedExecution& e, PricedContender& pf) {
  bench::Contender& leader = *e.leader->c;
  bench::Contender& f = *pf.c;
  if (!leader.active || !f.planned || !leader.accelerator || !f.accelerator) return false;
  if (leader.accelerator->bytes_in_use() > f.accelerator->info().capacity_bytes) return false;
  f.planned = false;
  f.strategy.reset();  // planned only to be compared; the leader's executes
  f.point.placement = leader.point.placement;
  f.point.provenance = reports::weaker(
      f.point.provenance,
      bench::provenance_of(f.accelerator->info(), leader.strategy->memory_regions()));
  f.active = true;
  e.followers.push_back(&pf);
  return true;
}

namespace {

// Step s of `strategy`, recorded as each of `rs`'s: a step that throws fails them all.
void step_once(Strategy& strategy, const std::vector<PricedContender*>& rs,
               bench::ReferenceOracle& oracle, int s, StepResult& out) {
  out.clear_keeping_memory();
  const bool timed = s >= rs.front()->c->ctx->spec.stop.warmup_steps;
  bool scores = false;
  for (const PricedContender* r : rs) scores |= bench::scores_next_step(*r->c);
  try {
    bench::execute_step(strategy, s, timed && scores, out);
  } catch (const Error& e) {
    for (PricedContender* r : rs)
      bench::fail(*r->c, reports::PointStatus::error,
                  "step " + std::to_string(s) + ": " + e.problem());
    return;
  }
  for (PricedContender* r : rs)
    bench::record_step(*r->c, r->priced.get(), strategy, oracle, s, out);
}

// Every recorder in the round's one slot: they step as one.
std::vector<std::pair<bench::Contender*, int>> in_one_slot(const SharedExecution& e) {
  std::vector<std::pair<bench::Contender*, int>> out;
  for (PricedContender* r : e.recorders()) out.emplace_back(r->c.get(), 0);
  return out;
}

}  // namespace

bool run_execution(bench::SweepRun& run, SharedExecution& e, bench::ReferenceOracle& oracle,
                   const std::string& where) {
  const bench::SweepSpec& spec = run.ctx.spec;
  const int steps = spec.decode_steps;
  const bench::RoundPlan plan(steps, spec.stop.warmup_steps, spec.stop.rounds);
  Strategy& strategy = *e.leader->c->strategy;
  int rounds_done = 0;
  StepResult out;  // each step's, its memory kept
  bool stopped_all = false;
  for (int s = 0; s < steps && !stopped_all; ++s) {
    if (run.stop_requested()) {  // between steps, not inside one
      run.stopped = true;
      return false;
    }
    const std::vector<PricedContender*> rs = e.recorders();
    if (rs.empty()) return true;  // every recorder failed
    step_once(strategy, rs, oracle, s, out);
    run.tell(where + ": round " + std::to_string(rounds_done + 1) + ", step " +
             std::to_string(s + 1) + "/" + std::to_string(steps));
    if (plan.ends_round(s)) stopped_all = bench::close_round(in_one_slot(e), ++rounds_done);
  }
  if (!stopped_all) {
    std::vector<bench::Contender*> rs;
    for (PricedContender* r : e.recorders()) rs.push_back(r->c.get());
    bench::finish_group(rs, reports::StopReason::max_steps);
  }
  for (PricedContender* f : e.followers)
    if (f->c->point.status == reports::PointStatus::ok)
      f->c->point.trajectory = strategy.trajectory();
  return true;
}

}  // namespace hb::model
