#include "kernels/cpu/kth_largest.h"

#include <cstring>
#include <vector>

namespace hb::cpu {

namespace {

// Unsigned order == float order (no NaN); both zeros map to the same key.
inline uint32_t order_key(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  u = x == 0.0f ? 0u : u;
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

inline float from_order_key(uint32_t key) {
  const uint32_t u = (key & 0x80000000u) ? (key & 0x7fffffffu) : ~key;
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}

}  // namespace

KthLargest kth_largest(const float* keys, int64_t n, int64_t k) {
  // Most significant byte first: each pass histograms the survivors' next byte, finds the bin
  // holding the k-th largest, counts the bins above it, and keeps only that bin's keys.
  thread_local std::vector<uint32_t> cur, next;
  cur.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) cur[i] = order_key(keys[i]);
  int64_t m = n, above = 0;
  uint32_t key = 0;
  for (int shift = 24; shift >= 0; shift -= 8) {
    int64_t hist[256] = {};
    for (int64_t i = 0; i < m; ++i) ++hist[(cur[i] >> shift) & 0xffu];
    int bin = 255;
    for (; hist[bin] < k; --bin) {  // the bins sum to m >= k, so this stops at bin >= 0
      k -= hist[bin];
      above += hist[bin];
    }
    key |= static_cast<uint32_t>(bin) << shift;
    if (shift == 0) break;
    // Branchless compaction: every key is written, the cursor moves past the bin's only.
    next.resize(static_cast<size_t>(m));
    int64_t w = 0;
    for (int64_t i = 0; i < m; ++i) {
      next[w] = cur[i];
      w += static_cast<int64_t>(((cur[i] >> shift) & 0xffu) == static_cast<uint32_t>(bin));
    }
    m = w;
    cur.swap(next);
    if (m == 1) {  // one key left: it is the answer, and every key still above it was counted
      key = cur[0];
      break;
    }
  }
  return {from_order_key(key), above};
}

}  // namespace hb::cpu
