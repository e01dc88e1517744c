#pragma once
// Idle memory latency by pointer chasing: every load depends on the previous one, so neither
// out-of-order execution nor prefetchers can hide the memory's latency.
#include <cstddef>
#include <cstdint>

namespace hb::memtier {

// Links the cache lines of [p, p+bytes) into one random cycle (Sattolo's algorithm: a
// single cycle through every line, so the chase never settles in a short loop that fits
// in cache). Deterministic for a given seed.
void build_chase_cycle(void* p, size_t bytes, uint64_t seed);

// Follows `hops` pointers from p; returns nanoseconds per hop.
double chase_ns_per_hop(const void* p, int64_t hops);

}  // namespace hb::memtier
