#include "reports/run/step_round.h"

#include <cmath>
#include <string>

#include "core/error.h"
#include "core/timer.h"

namespace hb::run {

namespace {

// Model mode: the step's price replaces its timing (replace) or is kept beside it (observe).
void price_step(Contender& c, const SweepContext& ctx, int s, StepResult& out) {
  const StepModel& model = *ctx.env.model;
  const StepPrice m = model.price(c.point.axes, *c.strategy, s, out);
  if (model.replace) {
    out.total_ns = std::llround(m.total_ns);
    out.phase_ns.clear();
    for (const auto& [ph, ns] : m.phase_ns) out.phase_ns[ph] = std::llround(ns);
  } else if (s >= ctx.spec.stop.warmup_steps && m.total_ns > 0) {
    c.modeled.push_back(m.total_ns);
    for (const auto& [ph, ns] : m.phase_ns) c.modeled_phases[ph].push_back(ns);
    c.modeled_overlap = m.overlap;
  }
}

// Runs step s: false (and the contender failed) when it threw.
bool run_step(Contender& c, const SweepContext& ctx, int s, StepResult& out) {
  try {
    c.strategy->prepare_step(s);
    const int64_t t0 = now_ns();
    c.strategy->step(s, out);
    out.total_ns = now_ns() - t0;
    if (ctx.env.model) price_step(c, ctx, s, out);
  } catch (const Error& e) {
    fail(c, reports::PointStatus::error, "step " + std::to_string(s) + ": " + e.problem());
    return false;
  }
  return true;
}

// Whether the runner scores this contender's next timed step against the reference. Replays
// of the positions are not: they would count the same positions twice.
bool scores_next_step(const Contender& c, const SweepSpec& spec) {
  return c.pass == 0 && (spec.accuracy_steps < 0 || c.scored < spec.accuracy_steps);
}

// A timed step: its time, phases, traffic and (while --accuracy-steps lasts) its accuracy;
// then the stopping rules decide whether the contender goes on.
void record_step(Contender& c, const SweepContext& ctx, ReferenceOracle& oracle, int s,
                 const StepResult& out) {
  const SweepSpec& spec = ctx.spec;
  if (c.samples.empty()) c.first_timed_ns = now_ns() - out.total_ns;
  c.samples.push_back(static_cast<double>(out.total_ns));
  for (const auto& [ph, ns] : out.phase_ns) c.phases[ph].push_back(static_cast<double>(ns));
  c.traffic_sum += out.traffic;
  if (scores_next_step(c, spec)) {
    const bool probs = !out.attended.empty();
    c.accuracy.add(oracle.at(s, probs), out);
    ++c.scored;
  }
  const double elapsed = (now_ns() - c.first_timed_ns) * 1e-9;
  c.stop.add({s, static_cast<double>(out.total_ns), elapsed, c.scored, c.pass});
  if (const StoppingCriterion* rule = c.stop.finished())
    finish(c, rule->reason(), ctx.side_platform);
}

}  // namespace

bool step_round(const std::vector<std::unique_ptr<Contender>>& cs, const SweepContext& ctx,
                ReferenceOracle& oracle, int s) {
  bool any = false;
  for (size_t i = 0; i < cs.size(); ++i) {
    Contender& c = *cs[(i + static_cast<size_t>(s)) % cs.size()];
    if (!c.active) continue;
    any = true;
    StepResult out;
    if (!run_step(c, ctx, s, out)) continue;
    if (s < ctx.spec.stop.warmup_steps) continue;  // executed, not timed
    if (scores_next_step(c, ctx.spec)) {           // untimed: after total_ns was taken
      try {
        c.strategy->fill_attended(s, out);
      } catch (const Error& e) {
        fail(c, reports::PointStatus::error, "step " + std::to_string(s) + ": " + e.problem());
        continue;
      }
    }
    record_step(c, ctx, oracle, s, out);
  }
  return any;
}

}  // namespace hb::run
