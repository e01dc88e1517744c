#pragma once
// The speedup of one contender over another measured side by side in rounds: the median of the
// per-round ratios, with a distribution-free confidence interval. Pairing by round cancels what
// drifts between rounds (a burst of load, a frequency change) because both contenders of a pair
// ran in the same round; the interval then carries only the noise the pairing leaves.
#include <cstdint>
#include <span>
#include <vector>

namespace hb {

struct RatioInterval {
  double ratio = 0;  // median over rounds of b_i / a_i (> 1: a is faster); 0 = no pairs
  double low = 0;    // the interval's bounds (order statistics of the ratios)
  double high = 0;
  int pairs = 0;        // rounds in which both had a positive figure
  double coverage = 0;  // the interval's exact coverage (binomial), >= the asked one when n allows
  // repeated_ratio: the passes whose own ratios widened the interval (0: the rounds alone).
  int passes = 0;
  bool excludes_one() const { return pairs > 0 && (low > 1 || high < 1); }
  // The whole interval within a factor (1 + tol) of 1: the two are the same within tol.
  bool within(double tol) const { return pairs > 0 && low >= 1 / (1 + tol) && high <= 1 + tol; }
  // Half the interval's width relative to the ratio (a "± x%" figure).
  double rel_half_width() const { return ratio > 0 ? (high - low) / (2 * ratio) : 0; }
};

// a[i], b[i]: the two contenders' figures (e.g. median step times) in round i; b / a per round.
// The interval is [r_(k), r_(n+1-k)] of the sorted ratios with the largest k whose coverage
// 1 - 2 P(Bin(n, 1/2) < k) is at least `coverage` (the order-statistic interval of a median,
// valid for any distribution of independent rounds). Below 6 rounds no k reaches 95%: the
// interval is then [min, max] and `coverage` says what it really covers (5 rounds: 93.75%).
RatioInterval paired_ratio(std::span<const double> a, std::span<const double> b,
                           double coverage = 0.95);

// Rounds that came in passes (`run --repetitions`, each pass its own process): the ratio is
// still the median over every round, but rounds of one pass share what was set when the pass
// began (where its memory landed, the minute it ran in), so a round-level interval cannot see
// how far a pass shifts as a whole. With two or more passes the interval is the hull of the
// rounds' order-statistic interval and Student's t interval, at `coverage`, of the mean of the
// passes' own log ratios (each the median of its rounds): as wide as the passes disagree, and
// wide when they are few (3 passes: +-4.30 standard errors). `rounds_per_pass` counts each
// pass's rounds in order; when it does not account for exactly the rounds of a and b, or holds
// fewer than two passes with pairs, the result is paired_ratio's.
//
// `spread`, when given, is the pass-to-pass spread of a whole group of contenders that ran the
// same passes (pass_spread): the t interval then uses its variance and degrees of freedom
// instead of the pair's own, which with 3 passes rest on 2 degrees of freedom and swing widely
// between runs.
struct PassSpread;
RatioInterval repeated_ratio(std::span<const double> a, std::span<const double> b,
                             std::span<const int64_t> rounds_per_pass, double coverage = 0.95,
                             const PassSpread* spread = nullptr);

// How much a pass shifts one contender against the others, pooled over a group: the passes are
// the blocks of a randomized complete block design whose treatments are the contenders, and the
// residual of the two-way table of each contender's level per pass (the median over the pass's
// rounds of its log figure less the round's mean log figure) estimates the variance of a
// contender's pass level, with (contenders - 1) x (passes - 1) degrees of freedom: textbook
// pooled error for pairwise comparisons of treatments (e.g. Montgomery, Design and Analysis of
// Experiments, ch. 4). A ratio of two contenders' pass means then has variance 2 x variance /
// passes.
struct PassSpread {
  double variance = 0;  // of one contender's log level within a pass, about its mean
  int df = 0;           // 0: not estimable (fewer than 2 contenders or passes)
  int passes = 0;
};
// rounds[c][i]: contender c's figure in round i (every contender the same rounds);
// rounds_per_pass: the passes' round counts, summing to the rounds. Rounds where a contender has
// no positive figure are left out of its pass level.
PassSpread pass_spread(const std::vector<std::vector<double>>& rounds,
                       std::span<const int64_t> rounds_per_pass);

// The same order-statistic interval around the median of `values` themselves (ratio = their
// median; non-positive or non-finite values are left out): how well a median of independent
// figures, such as a point's round medians, is known.
RatioInterval median_interval(std::span<const double> values, double coverage = 0.95);

}  // namespace hb
