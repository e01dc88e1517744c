// Radix selection against a full sort, on random, structured and adversarial key sets.
#include "kernels/cpu/kth_largest.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "core/rng.h"

namespace hb {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// The k-th largest and the count strictly above it, from a descending sort.
cpu::KthLargest by_sort(std::vector<float> v, int64_t k) {
  std::sort(v.begin(), v.end(), std::greater<float>());
  const float kth = v[k - 1];
  int64_t above = 0;
  for (float x : v) above += x > kth;
  return {kth, above};
}

void expect_matches_sort(const std::vector<float>& v, int64_t k, const char* what) {
  const cpu::KthLargest got = cpu::kth_largest(v.data(), static_cast<int64_t>(v.size()), k);
  const cpu::KthLargest want = by_sort(v, k);
  EXPECT_EQ(got.value, want.value) << what << " n=" << v.size() << " k=" << k;
  EXPECT_EQ(got.above, want.above) << what << " n=" << v.size() << " k=" << k;
}

TEST(KthLargest, MatchesSortOnFreshRandomKeysOfEverySize) {
  Rng rng(20261203);
  for (int64_t n : {1, 2, 3, 15, 16, 17, 255, 256, 257, 1000, 4421}) {
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& x : v) x = rng.normal() * 3.0f;
    for (int64_t k : {int64_t{1}, n / 20 + 1, n / 2 + 1, n})
      expect_matches_sort(v, std::clamp<int64_t>(k, 1, n), "normal");
  }
}

TEST(KthLargest, TiesZerosInfinitiesAndDenormals) {
  const float den = std::numeric_limits<float>::denorm_min();
  const std::vector<std::vector<float>> sets = {
      {5, 5, 5, 5, 5},
      {0.0f, -0.0f, 0.0f, -0.0f, 1.0f, -1.0f},
      {-kInf, -kInf, 3.0f, kInf, -kInf},
      {den, -den, 0.0f, 2 * den, -0.0f},
      {-1e30f, -2e30f, -1.5e30f, -1e-30f},
      // Keys equal in their top three bytes: the selection runs down to the last byte.
      {1.0f, std::nextafter(1.0f, 2.0f), std::nextafter(std::nextafter(1.0f, 2.0f), 2.0f), 1.0f},
  };
  for (const auto& v : sets)
    for (int64_t k = 1; k <= static_cast<int64_t>(v.size()); ++k) expect_matches_sort(v, k, "set");
}

TEST(KthLargest, MinusZeroReadsAsPlusZero) {
  const std::vector<float> v = {-0.0f, -0.0f, -1.0f};
  const cpu::KthLargest got = cpu::kth_largest(v.data(), 3, 2);
  EXPECT_EQ(got.value, 0.0f);
  EXPECT_FALSE(std::signbit(got.value));
  EXPECT_EQ(got.above, 0);
}

TEST(KthLargest, StructuredKeysWithFewDistinctValues) {
  // Quantised logits (many exact ties) over a wide range, as low-precision caches produce.
  Rng rng(7);
  std::vector<float> v(3000);
  for (auto& x : v) x = std::round(rng.normal() * 4.0f) / 4.0f;
  for (int64_t k : {1, 7, 150, 1499, 2999, 3000}) expect_matches_sort(v, k, "quantised");
}

}  // namespace
}  // namespace hb
