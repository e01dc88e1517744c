#include "reports/mann_whitney.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/rng.h"

namespace hb::reports {
namespace {

// x (n1 values) and y (n2 values), no ties, arranged so that exactly `u` pairs have x > y.
std::pair<std::vector<double>, std::vector<double>> with_u(int n1, int n2, int u) {
  std::vector<double> x, y;
  for (int j = 0; j < n2; ++j) y.push_back(j);
  for (int i = 0; i < n1; ++i) {
    const int wins = std::min(n2, u);
    u -= wins;
    x.push_back(wins - 0.5 + 1e-3 * i);  // above y[0..wins), below the rest; distinct
  }
  return {x, y};
}

TEST(MannWhitney, ScipyDocumentationExample) {
  // scipy.stats.mannwhitneyu docs (Conover's example): U1 = 17, exact p = 0.1111 (= 14/126),
  // asymptotic with continuity correction p = 0.1113.
  const std::vector<double> males = {19, 22, 16, 29, 24}, females = {20, 11, 17, 12};
  const UTest t = mann_whitney_u(males, females);
  EXPECT_EQ(t.u_x, 17);
  EXPECT_EQ(t.u_y, 3);
  EXPECT_EQ(t.u, 3);
  EXPECT_TRUE(t.exact);
  EXPECT_NEAR(t.p_value, 14.0 / 126.0, 1e-12);
  EXPECT_NEAR(mann_whitney_normal_p(males, females), 0.1113, 5e-4);
  EXPECT_NEAR(t.prob_x_greater, 17.0 / 20.0, 1e-12);
}

// Published two-tailed critical values of U: the difference is significant at alpha when
// U <= the critical value. alpha = .05 from the standard U table (n1, n2 <= 20); alpha = .01
// from the textbook table where we could check it, and from the Wilcoxon rank-sum table for
// n = 10 converted with U = R - n_small (n_small + 1) / 2. -1: not checked against a table.
struct Critical {
  int n1, n2, u05, u01;
};
constexpr Critical kTable[] = {
    {5, 5, 2, 0},     {6, 6, 5, 2},       {7, 7, 8, 4},     {8, 8, 13, 7},
    {9, 9, 17, 11},   {10, 10, 23, 16},   {12, 12, 37, 27}, {15, 15, 64, 51},
    {18, 18, 99, 81}, {20, 20, 127, 105}, {6, 10, 11, 6},   {8, 10, 17, 11},
    {5, 10, 8, -1},   {8, 12, 22, -1},    {10, 20, 55, -1}, {13, 16, 59, -1},
};

TEST(MannWhitney, ExactTestMatchesPublishedCriticalValues) {
  for (const auto& c : kTable) {
    for (auto [alpha, crit] : {std::pair{0.05, c.u05}, std::pair{0.01, c.u01}}) {
      if (crit < 0) continue;
      auto [x, y] = with_u(c.n1, c.n2, crit);
      UTest at = mann_whitney_u(x, y);
      ASSERT_TRUE(at.exact);
      ASSERT_EQ(at.u, crit);
      EXPECT_LE(at.p_value, alpha) << c.n1 << "x" << c.n2 << " U=" << crit << " alpha=" << alpha;
      auto [x2, y2] = with_u(c.n1, c.n2, crit + 1);
      EXPECT_GT(mann_whitney_u(x2, y2).p_value, alpha) << c.n1 << "x" << c.n2 << " U=" << crit + 1;
    }
  }
}

TEST(MannWhitney, SymmetricInItsArguments) {
  auto [x, y] = with_u(7, 9, 20);
  const UTest a = mann_whitney_u(x, y), b = mann_whitney_u(y, x);
  EXPECT_EQ(a.u, b.u);
  EXPECT_NEAR(a.p_value, b.p_value, 1e-12);
  EXPECT_NEAR(a.prob_x_greater, 1 - b.prob_x_greater, 1e-12);
}

TEST(MannWhitney, NormalApproximationAgreesWithExactAtTheSwitchOver) {
  // At n = 20 both methods are available; with the continuity correction they agree closely.
  for (int u : {100, 127, 150, 180}) {
    auto [x, y] = with_u(20, 20, u);
    EXPECT_NEAR(mann_whitney_normal_p(x, y), mann_whitney_exact_p(x, y), 0.004) << "U=" << u;
  }
}

TEST(MannWhitney, TieCorrectionAgreesWithExactTiedDistribution) {
  // Timings quantised to a coarse clock tick produce many ties; the tie-corrected variance
  // must track the exact (conditional on ties) distribution.
  Rng rng(42);
  for (int trial = 0; trial < 5; ++trial) {
    std::vector<double> x, y;
    for (int i = 0; i < 20; ++i) x.push_back(std::floor(rng.uniform() * 6));
    for (int i = 0; i < 20; ++i) y.push_back(std::floor(rng.uniform() * 6 + 0.8));
    EXPECT_NEAR(mann_whitney_normal_p(x, y), mann_whitney_exact_p(x, y), 0.01) << trial;
  }
}

TEST(MannWhitney, LargeSamplesUseTheNormalApproximation) {
  // Complete separation, 30 vs 30: U = 0, z = (450 - 0.5) / sqrt(30*30*61/12).
  std::vector<double> x, y;
  for (int i = 0; i < 30; ++i) x.push_back(i), y.push_back(100 + i);
  const UTest t = mann_whitney_u(x, y);
  EXPECT_FALSE(t.exact);
  EXPECT_EQ(t.u, 0);
  const double z = 449.5 / std::sqrt(30.0 * 30 * 61 / 12);
  EXPECT_NEAR(t.p_value, std::erfc(z / std::sqrt(2.0)), 1e-15);
  EXPECT_LT(t.p_value, 1e-9);
}

TEST(MannWhitney, FalsePositiveRateIsAlphaUnderTheNull) {
  // Same distribution on both sides: about alpha of the tests reject.
  Rng rng(7);
  for (int n : {12, 40}) {
    int rejected = 0;
    const int trials = 2000;
    for (int t = 0; t < trials; ++t) {
      std::vector<double> x, y;
      for (int i = 0; i < n; ++i) x.push_back(rng.normal()), y.push_back(rng.normal());
      if (mann_whitney_u(x, y).p_value < 0.05) ++rejected;
    }
    const double rate = double(rejected) / trials;
    EXPECT_GT(rate, 0.03) << n;
    EXPECT_LT(rate, 0.065) << n;
  }
}

TEST(MannWhitney, DegenerateInputs) {
  const std::vector<double> empty, one = {1.0}, same = {3, 3, 3};
  EXPECT_EQ(mann_whitney_u(empty, one).p_value, 1.0);
  EXPECT_EQ(mann_whitney_u(same, same).p_value, 1.0);
  std::vector<double> big(50, 3.0);
  EXPECT_EQ(mann_whitney_u(big, big).p_value, 1.0);
}

}  // namespace
}  // namespace hb::reports
