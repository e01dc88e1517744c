// The CUDA policy kernels' selection rules and index math (kernels/cuda/policy_layout.h), checked
// on the CPU: the radix top-k run step by step with the kernel's own functions must pick exactly
// cpu::topk_select_rows' set (ties, NaN, -0, -inf included), and the page offsets must be
// core/kv_cache.h's layout. A GPU is not needed: these are the functions the kernels call.
#include "kernels/cuda/policy_layout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "core/kv_cache.h"
#include "kernels/cpu/topk_select.h"

namespace hb {
namespace {

// The kernel's algorithm on one row, sequentially: four histogram passes, then the index-order
// collection of larger keys and the first `remaining` equal ones.
std::vector<int32_t> radix_topk(const std::vector<float>& v, int64_t k) {
  const int64_t n = static_cast<int64_t>(v.size());
  k = std::clamp<int64_t>(k, 0, n);
  if (k == 0) return {};
  uint32_t prefix = 0;
  int64_t remaining = k;
  for (int pass = 0; pass < cuda::kTopkPasses; ++pass) {
    uint32_t hist[256] = {};
    for (float x : v) {
      const uint32_t key = cuda::topk_key(x);
      if ((key & cuda::topk_mask(pass)) == prefix) ++hist[(key >> cuda::topk_shift(pass)) & 255u];
    }
    const cuda::TopkDigit d = cuda::topk_pick_digit(hist, remaining);
    prefix |= d.digit << cuda::topk_shift(pass);
    remaining = d.remaining;
  }
  std::vector<int32_t> out;
  int64_t equal_seen = 0;
  for (int64_t t = 0; t < n; ++t) {
    const uint32_t key = cuda::topk_key(v[t]);
    if (key > prefix || (key == prefix && equal_seen++ < remaining))
      out.push_back(static_cast<int32_t>(t));
  }
  return out;
}

std::vector<int32_t> cpu_topk(const std::vector<float>& v, int64_t k) {
  const int64_t n = static_cast<int64_t>(v.size());
  const int64_t kk = std::clamp<int64_t>(k, 0, n);
  std::vector<int32_t> idx(static_cast<size_t>(kk));
  cpu::topk_select_rows(v.data(), 1, n, n, k, idx.data(), nullptr);
  std::sort(idx.begin(), idx.end());  // the contract's order is ascending; be explicit
  return idx;
}

TEST(PolicyLayout, KeyOrderIsTheTopkOrder) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> ascending = {-inf,   -3e38f, -1.0f, -1e-30f, 0.0f,
                                        1e-40f, 1.0f,   3e38f, inf};
  for (size_t i = 1; i < ascending.size(); ++i)
    EXPECT_LT(cuda::topk_key(ascending[i - 1]), cuda::topk_key(ascending[i])) << ascending[i];
  EXPECT_EQ(cuda::topk_key(-0.0f), cuda::topk_key(0.0f));
  EXPECT_EQ(cuda::topk_key(std::nanf("")), cuda::topk_key(-inf));
  EXPECT_EQ(cuda::topk_key(-std::nanf("")), cuda::topk_key(-inf));
}

TEST(PolicyLayout, RadixTopkPicksTheCpuSelection) {
  std::mt19937 rng(7);
  const float inf = std::numeric_limits<float>::infinity();
  for (int64_t n : {1, 2, 7, 33, 255, 1000, 4099}) {
    for (int kind = 0; kind < 4; ++kind) {
      std::vector<float> v(static_cast<size_t>(n));
      std::normal_distribution<float> g(0.0f, 3.0f);
      for (auto& x : v) {
        x = g(rng);
        if (kind == 1) x = std::round(x);                  // many ties
        if (kind == 2) x = static_cast<float>(rng() % 3);  // almost all ties
      }
      if (kind == 3)
        for (size_t i = 0; i < v.size(); i += 5)
          v[i] = (i / 5) % 4 == 0   ? std::nanf("")
                 : (i / 5) % 4 == 1 ? -inf
                 : (i / 5) % 4 == 2 ? -0.0f
                                    : inf;
      for (int64_t k : {int64_t{0}, int64_t{1}, n / 3, n - 1, n, n + 5}) {
        EXPECT_EQ(radix_topk(v, k), cpu_topk(v, k)) << "n " << n << " kind " << kind << " k " << k;
      }
    }
  }
}

TEST(PolicyLayout, PagedOffsetsAreTheCacheLayout) {
  for (int P : {1, 16, 24})
    for (int width : {8, 32, 128, 256})
      for (int64_t slot : {int64_t{0}, int64_t{P - 1}, int64_t{P}, int64_t{5 * P + 3}})
        for (int j : {0, 1, width - 1}) {
          const int64_t block = static_cast<int64_t>(slot / P) * P * width;
          const int s = static_cast<int>(slot % P);
          EXPECT_EQ(cuda::paged_k_offset(slot, j, P, width),
                    block + static_cast<int64_t>(k_block_offset(j, s, P)));
          EXPECT_EQ(cuda::paged_v_offset(slot, j, P, width),
                    block + static_cast<int64_t>(v_block_offset(j, s, width)));
        }
}

}  // namespace
}  // namespace hb
