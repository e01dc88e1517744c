// kernels/cpu/topk_select (HybridGen's CPU-side selection) selects exactly the set topk_rows
// does, in ascending index order.
#include "kernels/cpu/topk_select.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/cpu/select.h"

namespace hb::cpu {
namespace {

void check_same_set(const std::vector<float>& v, int rows, int64_t n, int64_t k) {
  std::vector<int32_t> a(rows * std::min(k, n)), b(a.size());
  std::vector<float> av(a.size()), bv(a.size());
  topk_rows(v.data(), rows, n, n, k, a.data(), av.data());
  ThreadPool pool(2);
  topk_select_rows(v.data(), rows, n, n, k, b.data(), bv.data(), &pool);
  const int64_t kk = std::min(k, n);
  for (int r = 0; r < rows; ++r) {
    std::vector<int32_t> sa(a.begin() + r * kk, a.begin() + (r + 1) * kk);
    std::vector<int32_t> sb(b.begin() + r * kk, b.begin() + (r + 1) * kk);
    EXPECT_TRUE(std::is_sorted(sb.begin(), sb.end())) << "row " << r;
    for (int64_t i = 0; i < kk; ++i) EXPECT_EQ(bv[r * kk + i], v[r * n + sb[i]]);
    std::sort(sa.begin(), sa.end());
    EXPECT_EQ(sa, sb) << "row " << r << " n " << n << " k " << k;
  }
}

TEST(TopkSelect, SameSetAsTopkRows) {
  std::mt19937 rng(7);
  std::normal_distribution<float> nd;
  for (int64_t n : {1, 5, 64, 1000, 4097, 20000, 50001}) {
    for (int64_t k : {int64_t{0}, int64_t{1}, n / 20 + 1, n / 2, n, n + 3}) {
      std::vector<float> v(3 * n);
      for (auto& x : v) x = nd(rng);
      check_same_set(v, 3, n, k);
    }
  }
}

TEST(TopkSelect, SampledThresholdStaysExactOnAdversarialRows) {
  // Long rows take the sampled-threshold path: sorted, reversed, constant, and a few spikes.
  const int64_t n = 30000, k = 1500;
  std::vector<float> v(4 * n);
  for (int64_t i = 0; i < n; ++i) {
    v[i] = static_cast<float>(i);
    v[n + i] = static_cast<float>(n - i);
    v[2 * n + i] = 1.0f;
    v[3 * n + i] = (i % 997 == 0) ? 100.0f : static_cast<float>(i % 13);
  }
  check_same_set(v, 4, n, k);
  check_same_set(v, 4, n, 10);
}

TEST(TopkSelect, TiesTakeLowerIndicesAndNanNeverWins) {
  // Many equal values: the lowest indices among the ties are taken.
  std::vector<float> v = {1, 3, 3, 2, 3, 3, 0, 3};
  std::vector<int32_t> idx(3);
  topk_select_rows(v.data(), 1, 8, 8, 3, idx.data(), nullptr);
  EXPECT_EQ(idx, (std::vector<int32_t>{1, 2, 4}));
  check_same_set(v, 1, 8, 3);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> w = {nan, 1, nan, 2, 0};
  std::vector<int32_t> j(3);
  topk_select_rows(w.data(), 1, 5, 5, 3, j.data(), nullptr);
  EXPECT_EQ(j, (std::vector<int32_t>{1, 3, 4}));
}

}  // namespace
}  // namespace hb::cpu
