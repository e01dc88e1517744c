#include "kernels/cuda/launch_plan.h"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "core/error.h"

namespace hb::cuda {

TokenRange clamp_range(int64_t begin, int64_t end, int64_t n) {
  TokenRange r;
  r.begin = std::clamp<int64_t>(begin, 0, n);
  r.end = end < 0 ? n : std::clamp<int64_t>(end, r.begin, n);
  return r;
}

int64_t tiles_covering(const TokenRange& r, int tile) {
  if (r.empty()) return 0;
  return (r.end + tile - 1) / tile - r.begin / tile;
}

SplitPlan plan_splits(int64_t max_tiles, int64_t rows, int64_t resident_ctas, int min_tiles) {
  SplitPlan p;
  if (max_tiles <= 0 || rows <= 0) return p;
  int64_t want = std::max<int64_t>(1, resident_ctas / rows);
  want = std::min<int64_t>(want, (max_tiles + min_tiles - 1) / std::max(1, min_tiles));
  want = std::max<int64_t>(want, 1);
  const int64_t tps = (max_tiles + want - 1) / want;
  p.tiles_per_split = static_cast<int>(tps);
  p.splits = static_cast<int>((max_tiles + tps - 1) / tps);
  return p;
}

std::pair<int64_t, int64_t> changed_range(const PageRef* old, int64_t old_n, const PageRef* now,
                                          int64_t n) {
  const int64_t common = std::min(old_n, n);
  auto same = [&](int64_t i) { return old[i].k == now[i].k && old[i].v == now[i].v; };
  int64_t lo = 0;
  // Whole runs compare with memcmp (PageRef is two pointers, no padding), then find the entry.
  constexpr int64_t kRun = 256;
  while (lo + kRun <= common && std::memcmp(old + lo, now + lo, kRun * sizeof(PageRef)) == 0)
    lo += kRun;
  while (lo < common && same(lo)) ++lo;
  if (n > old_n) return {lo, n};
  if (lo == common) return {n, n};
  int64_t hi = common;
  while (hi - kRun > lo &&
         std::memcmp(old + hi - kRun, now + hi - kRun, kRun * sizeof(PageRef)) == 0)
    hi -= kRun;
  while (hi > lo && same(hi - 1)) --hi;
  return {lo, hi};
}

CopyPlan plan_copy_runs(std::span<const std::byte* const> blocks, size_t block_bytes) {
  CopyPlan plan;
  plan.slot_of.assign(blocks.size(), 0);
  std::vector<size_t> order(blocks.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return blocks[a] < blocks[b]; });
  const std::byte* prev = nullptr;
  for (size_t idx : order) {
    const std::byte* src = blocks[idx];
    if (prev && src == prev) {  // the same block listed twice: one copy, one slot
      plan.slot_of[idx] = plan.slots - 1;
      continue;
    }
    if (!plan.runs.empty() && prev + block_bytes == src) {
      plan.runs.back().blocks++;
    } else {
      plan.runs.push_back(CopyRun{src, plan.slots, 1});
    }
    plan.slot_of[idx] = plan.slots++;
    prev = src;
  }
  return plan;
}

void check_grid(int64_t x, int64_t y, int64_t z, const std::string& what) {
  if (x >= 1 && x <= kMaxGridX && y >= 1 && y <= kMaxGridYZ && z >= 1 && z <= kMaxGridYZ) return;
  throw Error(what + ": a grid of " + std::to_string(x) + " x " + std::to_string(y) + " x " +
                  std::to_string(z) + " CTAs is beyond CUDA's limits (x <= 2^31-1, y, z <= 65535)",
              "use a smaller batch or fewer heads per call", kExitUsage);
}

bool scratch_fits(int64_t budget_used, int64_t reserved, int64_t pool_used, int64_t bytes,
                  int64_t capacity) {
  const int64_t grow = std::max<int64_t>(0, pool_used + bytes - reserved);
  return budget_used + reserved + grow <= capacity;
}

int64_t stream_chunk_tokens(int64_t requested, int page_tokens, int tile) {
  const int64_t unit = std::lcm<int64_t>(page_tokens, tile);
  const int64_t r = std::max<int64_t>(requested, unit);
  return (r + unit - 1) / unit * unit;
}

}  // namespace hb::cuda
