#pragma once
// One round of a point: decode step s of every active contender, side by side.
#include <memory>
#include <vector>

#include "bench/accuracy.h"
#include "bench/contender.h"

namespace hb::bench {

// Steps each executing contender once (prepare_step untimed, step timed), prices the step on
// the lane of each contender recording it (model mode: the executor and its followers), records
// the timed steps and their accuracy, and stops those a stopping rule ends. The order rotates
// with s so no strategy always runs right after another's cache pollution. Returns whether any
// contender was executing.
bool step_round(const std::vector<Contender*>& cs, ReferenceOracle& oracle, int s);

}  // namespace hb::bench
