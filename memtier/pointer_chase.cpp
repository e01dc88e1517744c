#include "memtier/pointer_chase.h"

#include <numeric>
#include <utility>
#include <vector>

#include "core/rng.h"
#include "core/timer.h"

namespace hb::memtier {

namespace {
constexpr size_t kLine = 64;
}

void build_chase_cycle(void* p, size_t bytes, uint64_t seed) {
  const size_t lines = bytes / kLine;
  if (lines < 2) return;
  std::vector<uint32_t> next(lines);
  std::iota(next.begin(), next.end(), 0u);
  Rng rng(seed);
  for (size_t i = lines - 1; i > 0; --i)
    std::swap(next[i], next[static_cast<size_t>(rng.below(int64_t(i)))]);
  char* base = static_cast<char*>(p);
  for (size_t i = 0; i < lines; ++i)
    *reinterpret_cast<void**>(base + i * kLine) = base + size_t{next[i]} * kLine;
}

double chase_ns_per_hop(const void* p, int64_t hops) {
  const void* q = p;
  const int64_t t0 = now_ns();
  for (int64_t h = 0; h < hops; h += 8) {  // unrolled: loop overhead stays out of the figure
    q = *static_cast<const void* const*>(q);
    q = *static_cast<const void* const*>(q);
    q = *static_cast<const void* const*>(q);
    q = *static_cast<const void* const*>(q);
    q = *static_cast<const void* const*>(q);
    q = *static_cast<const void* const*>(q);
    q = *static_cast<const void* const*>(q);
    q = *static_cast<const void* const*>(q);
  }
  const int64_t t1 = now_ns();
  // Keep the chain alive so the compiler cannot drop the loads.
  asm volatile("" : : "r"(q) : "memory");
  return double(t1 - t0) / double((hops + 7) / 8 * 8);
}

}  // namespace hb::memtier
