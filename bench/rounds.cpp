#include "bench/rounds.h"

#include <algorithm>
#include <numeric>

namespace hb::bench {

RoundPlan::RoundPlan(int decode_steps, int warmup_steps, int rounds)
    : warmup_(warmup_steps),
      timed_(std::max(0, decode_steps - warmup_steps)),
      rounds_per_pass_(std::max(1, std::min(rounds, timed_))) {}

int RoundPlan::first_step(int round) const {
  // Rounds of floor or ceil(timed / rounds) steps, the longer ones first.
  const int base = timed_ / rounds_per_pass_, extra = timed_ % rounds_per_pass_;
  return warmup_ + round * base + std::min(round, extra);
}

int RoundPlan::round_of(int s) const {
  int r = 0;
  while (r + 1 < rounds_per_pass_ && s >= first_step(r + 1)) ++r;
  return r;
}

bool RoundPlan::ends_round(int s) const {
  if (s < warmup_) return false;
  return s + 1 == first_step(round_of(s) + 1) || s + 1 >= warmup_ + timed_;
}

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::vector<size_t> round_order(size_t n, uint64_t seed, int64_t round) {
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  uint64_t state = seed ^ (static_cast<uint64_t>(round) * 0xd1b54a32d192ed03ULL);
  for (size_t i = n; i > 1; --i) {
    // Multiply-shift maps 64 random bits onto [0, i) with a bias below i / 2^64.
    const auto j =
        static_cast<size_t>((static_cast<unsigned __int128>(splitmix64(state)) * i) >> 64);
    std::swap(order[i - 1], order[j]);
  }
  return order;
}

uint64_t round_seed(uint64_t sweep_seed, const std::string& unit_key) {
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a over the key
  for (unsigned char ch : unit_key) h = (h ^ ch) * 0x100000001b3ULL;
  uint64_t state = sweep_seed ^ h;
  return splitmix64(state);
}

}  // namespace hb::bench
