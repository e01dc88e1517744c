#pragma once
// Interleaved rounds (Google Benchmark's random interleaving, at the granularity of a decode
// step): a point group's contenders step the same decode positions together, one round after
// another. A round is a run of consecutive timed positions; at every step of it each contender
// takes its step once, in the round's own seeded random order. So a burst of load or a clock
// change hits every contender of the round alike, and a per-round ratio of two contenders
// cancels it (core/paired_ratio.h); the order changes per round so no contender always runs
// right after another's cache pollution.
#include <cstdint>
#include <string>
#include <vector>

namespace hb::bench {

// How a pass over the decode positions splits into rounds: the timed positions after the
// warm-up, cut into min(rounds, positions) runs whose lengths differ by at most one. A replay
// of the positions (another pass) holds as many rounds again.
class RoundPlan {
 public:
  RoundPlan(int decode_steps, int warmup_steps, int rounds);
  int rounds_per_pass() const { return rounds_per_pass_; }
  // The round (within its pass) step s belongs to; warm-up steps belong to round 0.
  int round_of(int s) const;
  // Whether s is the last step of its round (the group then checks whether it may stop).
  bool ends_round(int s) const;

 private:
  int warmup_ = 0, timed_ = 0, rounds_per_pass_ = 1;
  int first_step(int round) const;  // the first timed step of round `round` of a pass
};

// The order n contenders step in during round `round` of a unit: a permutation of 0..n-1 drawn
// from (seed, round) with a Fisher-Yates shuffle on a fixed generator (std::shuffle's algorithm
// is the library's, so its orders would differ between standard libraries).
std::vector<size_t> round_order(size_t n, uint64_t seed, int64_t round);
// SplitMix64, the rounds' generator: its output is fixed by its definition (unlike the standard
// distributions, whose algorithms each library chooses). Advances `state`.
uint64_t splitmix64(uint64_t& state);

// The seed of a unit's round orders: the sweep's --seed mixed with the unit's key, so every
// group has its own orders and the same sweep reproduces them.
uint64_t round_seed(uint64_t sweep_seed, const std::string& unit_key);

}  // namespace hb::bench
