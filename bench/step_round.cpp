#include "bench/step_round.h"

#include <string>

#include "core/error.h"
#include "core/timer.h"

namespace hb::bench {

namespace {

// What the point records of step s: the measured timing, or what `observed` puts in its place.
// False (and the contender failed) when the observer threw.
bool observe_step(Contender& c, StepObserver::PointRecord* observed, const Strategy& executed,
                  int s, bool timed, const StepResult& out, RecordedStep& r) {
  r = {out.total_ns, out.phase_ns, out.traffic};
  if (!observed) return true;
  try {
    observed->on_step(executed, s, timed, r);
  } catch (const Error& e) {
    fail(c, reports::PointStatus::error, "step " + std::to_string(s) + ": " + e.problem());
    return false;
  }
  return true;
}

}  // namespace

void execute_step(Strategy& strategy, int s, bool attended, StepResult& out) {
  strategy.prepare_step(s);
  const int64_t t0 = now_ns();
  strategy.step(s, out);
  out.total_ns = now_ns() - t0;
  if (attended) strategy.fill_attended(s, out);  // after total_ns was taken
}

bool scores_next_step(const Contender& c) {
  const int steps = c.ctx->spec.accuracy_steps;
  return !c.stack() && c.pass == 0 && (steps < 0 || c.accuracy.scored() < steps);
}

void record_step(Contender& c, StepObserver::PointRecord* observed, const Strategy& executed,
                 ReferenceOracle& oracle, int s, const StepResult& out) {
  const bool timed = s >= c.ctx->spec.stop.warmup_steps;  // else executed, not timed
  RecordedStep t;
  if (!observe_step(c, observed, executed, s, timed, out, t) || !timed) return;
  if (c.samples.empty()) c.first_timed_ns = now_ns() - t.total_ns;
  c.samples.push_back(static_cast<double>(t.total_ns));
  for (const auto& [ph, ns] : t.phase_ns) c.phases[ph].push_back(static_cast<double>(ns));
  c.traffic_sum += t.traffic;
  if (c.pass == 0) {
    c.first_pass.traffic += t.traffic;
    ++c.first_pass.steps;
  }
  if (scores_next_step(c)) {
    const bool probs = out.lists_attended();
    c.accuracy.add(oracle.at(s, probs), out);
  }
  const double elapsed = (now_ns() - c.first_timed_ns) * 1e-9;
  c.stop.add({s, static_cast<double>(t.total_ns), elapsed, c.accuracy.scored(), c.pass});
}

bool step_round(const std::vector<Contender*>& cs, const std::vector<size_t>& order,
                const std::vector<StepObserver::PointRecord*>& observed, ReferenceOracle& oracle,
                int s, StepResult& out, MachineControl* control) {
  bool any = false;
  const bool control_now = control && !cs.empty() && s >= cs.front()->ctx->spec.stop.warmup_steps;
  for (size_t slot = 0; slot <= order.size(); ++slot) {
    if (control_now && slot == control->slot()) control->measure();
    if (slot == order.size()) break;
    Contender& c = *cs[order[slot]];
    if (!c.active) continue;
    any = true;
    out.clear_keeping_memory();
    const bool timed = s >= c.ctx->spec.stop.warmup_steps;
    try {
      execute_step(*c.strategy, s, timed && scores_next_step(c), out);
    } catch (const Error& e) {
      fail(c, reports::PointStatus::error, "step " + std::to_string(s) + ": " + e.problem());
      continue;
    }
    record_step(c, observed.empty() ? nullptr : observed[order[slot]], *c.strategy, oracle, s, out);
  }
  return any;
}

}  // namespace hb::bench
