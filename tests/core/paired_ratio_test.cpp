#include "core/paired_ratio.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <cstdint>
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

// Passes (run --repetitions) of `rounds` rounds each, every pass shifting b by its own factor
// drawn with log-SD `pass_shift`: what a process's memory placement does to a whole pass.
struct Passes {
  std::vector<double> a, b;
  std::vector<int64_t> rounds;
};
Passes shifted_passes(int passes, int rounds, double ratio, double pass_shift, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> shift(0.0, pass_shift);
  Passes p;
  for (int i = 0; i < passes; ++i) {
    const double factor = std::exp(shift(rng));
    const Rounds r = drifting_rounds(rounds, ratio * factor, 0.5, 0.005, seed * 31 + i);
    p.a.insert(p.a.end(), r.a.begin(), r.a.end());
    p.b.insert(p.b.end(), r.b.begin(), r.b.end());
    p.rounds.push_back(rounds);
  }
  return p;
}

TEST(RepeatedRatio, PassesThatAgreeLeaveTheRoundsInterval) {
  // The same rounds three times: every pass has the same median ratio, so no spread to add.
  const Rounds r = drifting_rounds(8, 1.3, 1.0, 0.03, 5);
  std::vector<double> a, b;
  for (int i = 0; i < 3; ++i) {
    a.insert(a.end(), r.a.begin(), r.a.end());
    b.insert(b.end(), r.b.begin(), r.b.end());
  }
  const std::vector<int64_t> rounds = {8, 8, 8};
  const RatioInterval pooled = paired_ratio(a, b), repeated = repeated_ratio(a, b, rounds);
  EXPECT_EQ(repeated.passes, 3);
  EXPECT_DOUBLE_EQ(repeated.ratio, pooled.ratio);
  EXPECT_DOUBLE_EQ(repeated.low, pooled.low);
  EXPECT_DOUBLE_EQ(repeated.high, pooled.high);
}

TEST(RepeatedRatio, ShiftedPassesWidenItByStudentsT) {
  // Three passes of nearly noise-free rounds whose ratios are 1.2 x 0.95, 1.2, 1.2 x 1.05.
  std::vector<double> a, b;
  const std::vector<double> shifts = {0.95, 1.0, 1.05};
  for (double s : shifts)
    for (int i = 0; i < 6; ++i) {
      a.push_back(10.0 + i);
      b.push_back((10.0 + i) * 1.2 * s);
    }
  const std::vector<int64_t> rounds = {6, 6, 6};
  const RatioInterval r = repeated_ratio(a, b, rounds);
  double mean = 0, var = 0;
  for (double s : shifts) mean += std::log(1.2 * s) / 3;
  for (double s : shifts) var += std::pow(std::log(1.2 * s) - mean, 2) / 2;
  const double half = 4.302653 * std::sqrt(var / 3);  // t(0.975, 2 degrees of freedom)
  EXPECT_EQ(r.passes, 3);
  EXPECT_EQ(r.pairs, 18);
  EXPECT_NEAR(r.ratio, 1.2, 1e-12);  // still the median over every round
  EXPECT_NEAR(r.low, std::exp(mean - half), 1e-5);
  EXPECT_NEAR(r.high, std::exp(mean + half), 1e-5);
  EXPECT_LT(paired_ratio(a, b).high, 1.2 * 1.05 + 1e-12);  // the rounds alone: [1.14, 1.26]
}

TEST(RepeatedRatio, CoversTheTrueRatioWhenEachPassShifts) {
  // Shifts per pass of 2% (log-SD), as measured between runs on the 2-core VM, with rounds far
  // quieter: the rounds' interval misses the true ratio most of the time, the repeated one not.
  int rounds_covered = 0, repeated_covered = 0;
  const int trials = 400;
  for (int t = 0; t < trials; ++t) {
    const Passes p = shifted_passes(3, 8, 1.2, 0.02, 1000 + t);
    const RatioInterval pooled = paired_ratio(p.a, p.b), r = repeated_ratio(p.a, p.b, p.rounds);
    rounds_covered += pooled.low <= 1.2 && 1.2 <= pooled.high;
    repeated_covered += r.low <= 1.2 && 1.2 <= r.high;
  }
  EXPECT_LT(rounds_covered, static_cast<int>(0.8 * trials));
  EXPECT_GE(repeated_covered, static_cast<int>(0.93 * trials));
}

TEST(RepeatedRatio, RoundsThatDoNotAddUpAreTheRoundsInterval) {
  const Passes p = shifted_passes(3, 6, 1.1, 0.05, 9);
  const RatioInterval pooled = paired_ratio(p.a, p.b);
  for (const std::vector<int64_t>& bad :
       {std::vector<int64_t>{}, std::vector<int64_t>{18}, std::vector<int64_t>{6, 6, 5},
        std::vector<int64_t>{6, 6, 7}}) {
    const RatioInterval r = repeated_ratio(p.a, p.b, bad);
    EXPECT_EQ(r.passes, 0);
    EXPECT_DOUBLE_EQ(r.low, pooled.low);
    EXPECT_DOUBLE_EQ(r.high, pooled.high);
  }
}

TEST(PassSpread, IsTheResidualOfTheContendersByPassesTable) {
  // Three contenders, two passes of two rounds, noise-free: contender 2 is 10% slower in pass 1
  // only. The residual's sum of squares is worked out below from the levels by hand.
  const double d = std::log(1.1);
  const std::vector<std::vector<double>> rounds = {
      {10, 10, 10, 10}, {20, 20, 20, 20}, {30, 30, 33, 33}};
  const std::vector<int64_t> passes = {2, 2};
  const PassSpread s = pass_spread(rounds, passes);
  // level[c][p] = log x[c] - mean_c log x: the interaction lives in contender 2, pass 1, where
  // its level rises by 2d/3 and the others' fall by d/3.
  std::vector<std::vector<double>> level(3, std::vector<double>(2));
  const double base[3] = {std::log(10.0), std::log(20.0), std::log(30.0)};
  for (int p = 0; p < 2; ++p) {
    const double extra = p == 1 ? d : 0;
    const double mean = (base[0] + base[1] + base[2] + extra) / 3;
    for (int c = 0; c < 3; ++c) level[c][p] = base[c] + (c == 2 ? extra : 0) - mean;
  }
  double ss = 0;
  for (int c = 0; c < 3; ++c)
    for (int p = 0; p < 2; ++p) {
      const double row = (level[c][0] + level[c][1]) / 2;
      const double col = (level[0][p] + level[1][p] + level[2][p]) / 3;
      ss += std::pow(level[c][p] - row - col, 2);  // the grand mean is 0
    }
  EXPECT_EQ(s.df, 2);
  EXPECT_EQ(s.passes, 2);
  EXPECT_NEAR(s.variance, ss / 2, 1e-12);
  EXPECT_GT(s.variance, 0);
}

TEST(PassSpread, NotEstimableWithoutTwoContendersAndTwoPasses) {
  const std::vector<int64_t> two = {2, 2}, one = {4};
  EXPECT_EQ(pass_spread({{1, 2, 3, 4}}, two).df, 0);
  EXPECT_EQ(pass_spread({{1, 2, 3, 4}, {1, 2, 3, 4}}, one).df, 0);
  EXPECT_EQ(pass_spread({{1, 2, 3}, {1, 2, 3, 4}}, two).df, 0);  // rounds that do not add up
}

TEST(PassSpread, PooledOverAGroupItCoversAndSwingsLessThanEachPairsOwn) {
  // Eight contenders, three passes; each contender's level shifts per pass by 2% (log-SD).
  // The pair's own t interval (2 degrees of freedom) and the group's (14) both cover; the
  // group's width varies far less from run to run.
  const int contenders = 8, passes = 3, rounds = 8, trials = 300;
  int own_covered = 0, pooled_covered = 0;
  std::vector<double> own_width, pooled_width;
  for (int t = 0; t < trials; ++t) {
    std::mt19937_64 rng(5000 + t);
    std::normal_distribution<double> shift(0.0, 0.02), jitter(0.0, 0.005);
    std::vector<std::vector<double>> r(contenders);
    for (int p = 0; p < passes; ++p) {
      std::vector<double> level(contenders);
      for (auto& l : level) l = std::exp(shift(rng));
      for (int i = 0; i < rounds; ++i) {
        const double load = 1 + 50 * std::abs(jitter(rng));  // a round's common drift
        for (int c = 0; c < contenders; ++c)
          r[c].push_back(10.0 * (c == 1 ? 1.2 : 1.0) * level[c] * load * (1 + jitter(rng)));
      }
    }
    const std::vector<int64_t> per_pass(passes, rounds);
    const PassSpread spread = pass_spread(r, per_pass);
    ASSERT_EQ(spread.df, (contenders - 1) * (passes - 1));
    const RatioInterval own = repeated_ratio(r[0], r[1], per_pass);
    const RatioInterval pooled = repeated_ratio(r[0], r[1], per_pass, 0.95, &spread);
    own_covered += own.low <= 1.2 && 1.2 <= own.high;
    pooled_covered += pooled.low <= 1.2 && 1.2 <= pooled.high;
    own_width.push_back(std::log(own.high / own.low));
    pooled_width.push_back(std::log(pooled.high / pooled.low));
  }
  auto cv = [](const std::vector<double>& v) {
    double m = 0, s = 0;
    for (double x : v) m += x / static_cast<double>(v.size());
    for (double x : v) s += (x - m) * (x - m) / static_cast<double>(v.size() - 1);
    return std::sqrt(s) / m;
  };
  EXPECT_GE(own_covered, static_cast<int>(0.93 * trials));
  EXPECT_GE(pooled_covered, static_cast<int>(0.93 * trials));
  EXPECT_LT(cv(pooled_width), 0.5 * cv(own_width));
}

}  // namespace
}  // namespace hb
