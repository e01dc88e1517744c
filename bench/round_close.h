#pragma once
// The end of a round of a point group (rounds.h): each recording contender's round is closed,
// then the group decides whether it stops. All of its contenders stop together, so each one's
// rounds pair with every other's.
#include <vector>

#include "bench/contender.h"

namespace hb::bench {

// Closes the round every executing contender of `cs` (and its followers) just took; `order` is
// the round's order (cs[order[0]] stepped first). Then stops the whole group, finishing every
// contender, when
//   - any has reached a limit (--timeout, the step cap): each stops on noise if it converged,
//     else on that limit;
//   - or `rounds_done` >= `min_rounds` (--rounds), every contender converged (noise, accuracy steps
//   scored)
//     and every pair of headline contenders (not ablations) of a lane is decided
//     (pair_decided).
// Returns whether the group stopped.
bool close_round(const std::vector<Contender*>& cs, const std::vector<size_t>& order,
                 int rounds_done, int min_rounds);

// Finishes every contender still recording: on noise if it converged, else on `limit`.
void finish_group(const std::vector<Contender*>& cs, reports::StopReason limit);

// Whether the ratio of two contenders' round medians is settled: its paired interval excludes 1
// (one is faster), or lies within --max-noise of 1 (a tie more rounds would not break).
bool pair_decided(const Contender& a, const Contender& b, double max_noise);

}  // namespace hb::bench
