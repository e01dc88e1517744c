#pragma once
// The end of a round of a point group (rounds.h): each recording contender's round is closed,
// then the group decides whether it stops. All of its contenders stop together, so each one's
// rounds pair with every other's.
#include <utility>
#include <vector>

#include "bench/contender.h"

namespace hb::bench {

// Closes the round every active contender of `cs` just took; `order` is the round's order
// (cs[order[0]] stepped first). Then stops the whole group, finishing every contender, when
//   - any has reached a limit (--timeout, the step cap): each stops on noise if it converged,
//     else on that limit;
//   - or `rounds_done` >= --rounds, every contender converged (noise, accuracy steps scored) and
//     every pair of headline contenders (not ablations) of one SweepContext is decided
//     (pair_decided).
// Returns whether the group stopped.
bool close_round(const std::vector<Contender*>& cs, const std::vector<size_t>& order,
                 int rounds_done);
// The same over the active contenders `recording`, each with its place in the round's order
// (several contenders recording one execution share it).
bool close_round(const std::vector<std::pair<Contender*, int>>& recording, int rounds_done);

// Finishes every contender still active: on noise if it converged, else on `limit`.
void finish_group(const std::vector<Contender*>& cs, reports::StopReason limit);

// Whether the ratio of two contenders' round medians is settled: its paired interval excludes 1
// (one is faster), or lies within --max-noise of 1 (a tie more rounds would not break).
bool pair_decided(const Contender& a, const Contender& b, double max_noise);

}  // namespace hb::bench
