#include "bench/step_round.h"

#include <cmath>
#include <map>
#include <string>

#include "core/error.h"
#include "core/timer.h"

namespace hb::bench {

namespace {

// A step's timing as one contender records it: as measured, or its lane's model's price. Apart
// from the step's result, which every contender recording it reads (a full strategy's attended
// tokens are megabytes a step at long context).
struct StepTiming {
  int64_t total_ns = 0;
  std::map<std::string, int64_t> phase_ns;
};

// Model mode: the step's price replaces its timing (replace) or is kept beside it (observe).
// False (and the contender failed) when pricing threw.
bool price_step(Contender& c, int s, const StepResult& out, StepTiming& t) {
  t = {out.total_ns, out.phase_ns};
  const SweepContext& ctx = *c.ctx;
  if (!ctx.env.model || c.stack()) return true;  // a model prices one layer's step
  const StepModel& model = *ctx.env.model;
  try {
    const StepPrice m = model.price(c.point.axes, c.executed(), s, out);
    if (model.replace) {
      t.total_ns = std::llround(m.total_ns);
      t.phase_ns.clear();
      for (const auto& [ph, ns] : m.phase_ns) t.phase_ns[ph] = std::llround(ns);
    } else if (s >= ctx.spec.stop.warmup_steps && m.total_ns > 0) {
      c.modeled.push_back(m.total_ns);
      for (const auto& [ph, ns] : m.phase_ns) c.modeled_phases[ph].push_back(ns);
      c.modeled_overlap = m.overlap;
    }
  } catch (const Error& e) {
    fail(c, reports::PointStatus::error, "step " + std::to_string(s) + ": " + e.problem());
    return false;
  }
  return true;
}

// A failure of the executed strategy ends every contender recording it.
void fail_all(Contender& c, const std::string& reason) {
  for (Contender* r : recorders(c)) fail(*r, reports::PointStatus::error, reason);
}

// Runs step s (measured): false (and every recording contender failed) when it threw.
bool run_step(Contender& c, int s, StepResult& out) {
  try {
    c.strategy->prepare_step(s);
    const int64_t t0 = now_ns();
    c.strategy->step(s, out);
    out.total_ns = now_ns() - t0;
  } catch (const Error& e) {
    fail_all(c, "step " + std::to_string(s) + ": " + e.problem());
    return false;
  }
  return true;
}

// Whether the runner scores this contender's next timed step against the reference. Replays
// of the positions are not: they would count the same positions twice. Nor is a layer stack:
// its scored layer's output is its one-layer twin's, scored there.
bool scores_next_step(const Contender& c, const SweepSpec& spec) {
  return !c.stack() && c.pass == 0 && (spec.accuracy_steps < 0 || c.scored < spec.accuracy_steps);
}

// A timed step: its time, phases, traffic and (while --accuracy-steps lasts) its accuracy, and
// what the stopping rules see of it.
void record_step(Contender& c, const SweepContext& ctx, ReferenceOracle& oracle, int s,
                 const StepResult& out, const StepTiming& t) {
  const SweepSpec& spec = ctx.spec;
  if (c.samples.empty()) c.first_timed_ns = now_ns() - t.total_ns;
  c.samples.push_back(static_cast<double>(t.total_ns));
  for (const auto& [ph, ns] : t.phase_ns) c.phases[ph].push_back(static_cast<double>(ns));
  c.traffic_sum += out.traffic;
  if (scores_next_step(c, spec)) {
    const bool probs = out.lists_attended();
    c.accuracy.add(oracle.at(s, probs), out);
    ++c.scored;
  }
  const double elapsed = (now_ns() - c.first_timed_ns) * 1e-9;
  c.stop.add({s, static_cast<double>(t.total_ns), elapsed, c.scored, c.pass});
}

// Whether any contender recording c's strategy scores its next timed step.
bool any_scores(Contender& c, const SweepSpec& spec) {
  for (const Contender* r : recorders(c))
    if (scores_next_step(*r, spec)) return true;
  return false;
}

}  // namespace

bool step_round(const std::vector<Contender*>& cs, const std::vector<size_t>& order,
                ReferenceOracle& oracle, int s, StepResult& out) {
  bool any = false;
  for (size_t i : order) {
    Contender& c = *cs[i];
    if (!c.executing()) continue;
    any = true;
    const SweepSpec& spec = c.ctx->spec;
    out.clear_keeping_memory();
    if (!run_step(c, s, out)) continue;
    if (const int batch = c.ctx->stands_for; batch > 1)
      out.traffic =
          c.ctx->env.sampler->batch_traffic(spec, batch, out.traffic, c.executed().overlap());
    const bool timed = s >= spec.stop.warmup_steps;  // else executed, not timed
    if (timed && any_scores(c, spec)) {              // untimed: after total_ns was taken
      try {
        c.strategy->fill_attended(s, out);
      } catch (const Error& e) {
        fail_all(c, "step " + std::to_string(s) + ": " + e.problem());
        continue;
      }
    }
    // Each recording contender prices the same executed step on its own lane.
    for (Contender* r : recorders(c)) {
      StepTiming t;
      if (!price_step(*r, s, out, t) || !timed) continue;
      record_step(*r, *r->ctx, oracle, s, out, t);
    }
  }
  return any;
}

}  // namespace hb::bench
