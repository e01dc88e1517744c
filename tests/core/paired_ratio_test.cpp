#include "core/paired_ratio.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace hb {
namespace {

// Rounds of two contenders whose true ratio is `ratio`, both hit by the same drift per round
// (a load burst slows every contender of that round alike) and by independent noise.
struct Rounds {
  std::vector<double> a, b;
};
Rounds drifting_rounds(int n, double ratio, double drift, double noise, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> burst(1.0, 1.0 + drift);
  std::normal_distribution<double> jitter(0.0, noise);
  Rounds r;
  for (int i = 0; i < n; ++i) {
    const double load = burst(rng);
    r.a.push_back(10.0 * load * (1 + jitter(rng)));
    r.b.push_back(10.0 * ratio * load * (1 + jitter(rng)));
  }
  return r;
}

TEST(PairedRatio, EmptyAndNonPositiveRoundsGiveNoPairs) {
  EXPECT_EQ(paired_ratio({}, {}).pairs, 0);
  const std::vector<double> a = {0, -1, NAN}, b = {1, 1, 1};
  const RatioInterval r = paired_ratio(a, b);
  EXPECT_EQ(r.pairs, 0);
  EXPECT_FALSE(r.excludes_one());
  EXPECT_FALSE(r.within(0.5));
}

TEST(PairedRatio, CoverageIsTheBinomialOrderStatisticsOne) {
  // n = 5: only [min, max] exists, covering 1 - 2/32.
  std::vector<double> a(5, 1.0), b = {1, 2, 3, 4, 5};
  RatioInterval r = paired_ratio(a, b);
  EXPECT_DOUBLE_EQ(r.ratio, 3);
  EXPECT_DOUBLE_EQ(r.low, 1);
  EXPECT_DOUBLE_EQ(r.high, 5);
  EXPECT_NEAR(r.coverage, 0.9375, 1e-12);
  // n = 20 at 95%: k = 6 ([r_6, r_15], coverage 1 - 2 P(X <= 5) = 0.9586).
  a.assign(20, 1.0);
  b.clear();
  for (int i = 1; i <= 20; ++i) b.push_back(i);
  r = paired_ratio(a, b);
  EXPECT_DOUBLE_EQ(r.low, 6);
  EXPECT_DOUBLE_EQ(r.high, 15);
  EXPECT_NEAR(r.coverage, 0.958610, 1e-5);
  EXPECT_GE(r.coverage, 0.95);
}

TEST(PairedRatio, PairingCancelsDriftThatUnpairedMediansCarry) {
  // Drift of up to 3x per round, 1% noise: the paired interval is tight around the true 1.5
  // although each contender's own figures spread over 3x.
  const Rounds r = drifting_rounds(12, 1.5, 2.0, 0.01, 7);
  const RatioInterval p = paired_ratio(r.a, r.b);
  EXPECT_EQ(p.pairs, 12);
  EXPECT_NEAR(p.ratio, 1.5, 0.03);
  EXPECT_LT(p.low, 1.5 * 1.01 + 0.02);
  EXPECT_GT(p.high, 1.5 * 0.99 - 0.02);
  EXPECT_LT(p.rel_half_width(), 0.03);
  EXPECT_TRUE(p.excludes_one());
}

TEST(PairedRatio, CoversTheTrueRatioAtLeastAsOftenAsItSays) {
  int covered = 0;
  const int trials = 400;
  for (int t = 0; t < trials; ++t) {
    const Rounds r = drifting_rounds(9, 1.2, 1.0, 0.05, 100 + t);
    const RatioInterval p = paired_ratio(r.a, r.b);
    // The median of the per-round ratio's distribution is 1.2 up to the noise's asymmetry.
    covered += p.low <= 1.2 && 1.2 <= p.high;
  }
  EXPECT_GE(covered, static_cast<int>(0.93 * trials));  // 9 rounds cover 98% nominally
}

TEST(PairedRatio, EqualContendersTieWithinTheirNoise) {
  const Rounds r = drifting_rounds(10, 1.0, 1.0, 0.01, 3);
  const RatioInterval p = paired_ratio(r.a, r.b);
  EXPECT_FALSE(p.excludes_one());
  EXPECT_TRUE(p.within(0.05));
  EXPECT_FALSE(p.within(0.0001));
}

}  // namespace
}  // namespace hb
