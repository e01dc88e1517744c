#pragma once
// Mann-Whitney U test (Wilcoxon rank-sum), two-sided: do two sets of timing samples come from
// the same distribution? Chosen for compare because timings are skewed and heavy-tailed (a
// t-test's normality assumption does not hold) and it needs nothing but the raw samples.
#include <span>

namespace hb::reports {

struct UTest {
  double u_x = 0;      // pairs (x_i, y_j) with x_i > y_j, ties counting 1/2
  double u_y = 0;      // n_x * n_y - u_x
  double u = 0;        // min(u_x, u_y): the statistic printed tables of critical values use
  double p_value = 1;  // two-sided; 1 when either set is empty
  bool exact = false;  // exact permutation distribution (small samples) or normal approximation
  // P(X > Y) + P(X = Y)/2, the common-language effect size: 0.5 = no shift, 1 = every x larger.
  double prob_x_greater = 0.5;
};

// Largest sample size (each side) for which the exact distribution is used.
inline constexpr int kExactMaxSamples = 20;

// Two-sided test; exact when both sets have at most kExactMaxSamples values (ties handled
// exactly too: the distribution is of the mid-rank sum given the observed ties), otherwise the
// normal approximation with tie and continuity corrections.
UTest mann_whitney_u(std::span<const double> x, std::span<const double> y);

// The two p-value methods on their own, for tests that check one against the other.
double mann_whitney_exact_p(std::span<const double> x, std::span<const double> y);
double mann_whitney_normal_p(std::span<const double> x, std::span<const double> y);

}  // namespace hb::reports
