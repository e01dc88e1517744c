#pragma once
// Host-side planning for the CUDA kernels, free of CUDA calls so it is unit-tested on
// machines without a GPU: how many KV splits a decode launch uses, which page-table entries
// changed since the last upload, and how the streaming path coalesces page copies.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/kv_cache.h"

namespace hb::cuda {

// The token range of one KV head a launch attends, after clamping to its num_tokens.
struct TokenRange {
  int64_t begin = 0, end = 0;
  bool empty() const { return end <= begin; }
};
TokenRange clamp_range(int64_t begin, int64_t end, int64_t num_tokens);  // end < 0: all

// Tiles (of `tile` tokens, counted from token 0) that cover [r.begin, r.end).
int64_t tiles_covering(const TokenRange& r, int tile);

struct SplitPlan {
  int splits = 1;           // CTAs per (sequence, KV head, head chunk)
  int tiles_per_split = 1;  // tiles each of them walks
};
// Enough splits that rows * splits fills the `resident_ctas` the GPU holds at once (one full
// wave: a memory-bound kernel gains nothing from more, and every split costs a partial
// write and a merge read), but at least `min_tiles` tiles per split.
SplitPlan plan_splits(int64_t max_tiles, int64_t rows, int64_t resident_ctas, int min_tiles = 2);

// Entries [lo, hi) of `now` (n entries) that differ from `old` (old_n entries), where entries
// past old_n always count as changed. {k, k} when nothing changed.
std::pair<int64_t, int64_t> changed_range(const PageRef* old, int64_t old_n, const PageRef* now,
                                          int64_t n);

// Streaming path: blocks (host addresses) to bring over for one chunk. Each distinct block is
// given a slot in the device chunk buffer, in host-address order, so host-contiguous blocks
// land contiguously and move as one copy.
struct CopyRun {
  const std::byte* src = nullptr;
  size_t first_slot = 0;
  size_t blocks = 0;
};
struct CopyPlan {
  std::vector<size_t> slot_of;  // slot of blocks[i]
  std::vector<CopyRun> runs;
  size_t slots = 0;  // distinct blocks
};
CopyPlan plan_copy_runs(std::span<const std::byte* const> blocks, size_t block_bytes);

// CUDA's grid limits: x up to 2^31 - 1 CTAs, y and z up to 65535. Kernels whose row count grows
// with batch x heads put the rows on x; this refuses, with a clear error naming `what`, a grid
// that would fail to launch (an invalid-configuration error found only at synchronize).
inline constexpr int64_t kMaxGridX = 2147483647, kMaxGridYZ = 65535;
void check_grid(int64_t x, int64_t y, int64_t z, const std::string& what);

// Whether `bytes` more scratch fits the accelerator's capacity next to `budget_used` bytes of
// buffers: the scratch pool holds `reserved` bytes of device memory of which `pool_used` are
// live, and grows only by what its free part cannot hold.
bool scratch_fits(int64_t budget_used, int64_t reserved, int64_t pool_used, int64_t bytes,
                  int64_t capacity);

// The streaming chunk length: at least `requested`, a multiple of the page and of the tile.
int64_t stream_chunk_tokens(int64_t requested, int page_tokens, int tile);

}  // namespace hb::cuda
