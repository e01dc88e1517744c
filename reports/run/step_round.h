#pragma once
// One round of a point: decode step s of every active contender, side by side.
#include <memory>
#include <vector>

#include "reports/run/accuracy.h"
#include "reports/run/contender.h"

namespace hb::run {

// Steps each active contender once (prepare_step untimed, step timed, priced in model mode),
// records the timed steps and their accuracy, and stops those a stopping rule ends. The order
// rotates with s so no strategy always runs right after another's cache pollution. Returns
// whether any contender was active.
bool step_round(const std::vector<std::unique_ptr<Contender>>& cs, const SweepContext& ctx,
                ReferenceOracle& oracle, int s);

}  // namespace hb::run
