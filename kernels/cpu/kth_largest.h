#pragma once
// The k-th largest of a set of floats, by radix selection: the selection step shared by the
// top-k paths (topk_select.cpp's threshold pass, select.cpp's streaming compaction and piece
// merge). Linear in n with a small constant and no data-dependent branches in its passes:
// nth_element on a few thousand candidates per head was a fifth of the fused K scan.
#include <cstdint>

namespace hb::cpu {

struct KthLargest {
  float value;    // the k-th largest (-0 reads as +0)
  int64_t above;  // how many of the n are strictly larger (< k; the rest of the k are ties)
};

// keys[0, n): no NaN (callers rank NaN as -inf first); 1 <= k <= n. -0 and +0 are equal.
KthLargest kth_largest(const float* keys, int64_t n, int64_t k);

}  // namespace hb::cpu
