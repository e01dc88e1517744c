#pragma once
// One decode step s of every active contender of a point group, side by side.
#include <memory>
#include <vector>

#include "bench/accuracy.h"
#include "bench/contender.h"

namespace hb::bench {

// Steps each executing contender once, cs[order[0]] first (prepare_step untimed, step timed),
// hands the step to the observer of each contender recording it (model mode: the executor and
// its followers, each on its lane), records the timed steps, their accuracy and their stopping
// rules' view. Whether a contender stops is the group's decision at the end of a round
// (round_close.h). Returns whether any contender was executing. `out` is the step's result for each
// contender in turn, its memory kept from step to step (StepResult::clear_keeping_memory).
bool step_round(const std::vector<Contender*>& cs, const std::vector<size_t>& order,
                ReferenceOracle& oracle, int s, StepResult& out);

}  // namespace hb::bench
