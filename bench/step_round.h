#pragma once
// One decode step s of every active contender of a point group, side by side, and the two halves
// of a step it is made of (executing a strategy's step, recording it as a point's), for a caller
// that records one execution as several points (model/: model mode's platforms).
#include <memory>
#include <vector>

#include "bench/accuracy.h"
#include "bench/contender.h"
#include "bench/machine_control.h"
#include "bench/step_observer.h"

namespace hb::bench {

// Steps each active contender once, cs[order[0]] first (execute_step, then record_step with its
// record in `observed`: one per contender of cs, null where none, or empty for none at all).
// Whether a contender stops is the group's decision at the end of a round (round_close.h).
// Returns whether any contender was active. `out` is the step's result for each contender in
// turn, its memory kept from step to step (StepResult::clear_keeping_memory).
// With `control` and s a timed step: the machine control reads once, at its slot of the order.
bool step_round(const std::vector<Contender*>& cs, const std::vector<size_t>& order,
                const std::vector<StepObserver::PointRecord*>& observed, ReferenceOracle& oracle,
                int s, StepResult& out, MachineControl* control = nullptr);

// Step s of `strategy`: prepare_step untimed, step timed (out.total_ns), then, with `attended`,
// what it attended (fill_attended, for scoring). Throws hb::Error.
void execute_step(Strategy& strategy, int s, bool attended, StepResult& out);

// Whether c's next timed step is scored against the reference. Replays of the positions are not:
// they would count the same positions twice. Nor is a layer stack: its scored layer's output is
// its one-layer twin's, scored there.
bool scores_next_step(const Contender& c);

// Records step s, as `executed` ran it into `out`, as active contender c's: what `observed` (the
// caller's record of c, StepObserver; null: none) puts in place of the measured step (a throw
// fails c), and for a timed step its time, phases, traffic, accuracy (while --accuracy-steps
// lasts) and what its stopping rules see of it.
void record_step(Contender& c, StepObserver::PointRecord* observed, const Strategy& executed,
                 ReferenceOracle& oracle, int s, const StepResult& out);

}  // namespace hb::bench
