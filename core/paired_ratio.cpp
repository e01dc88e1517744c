#include "core/paired_ratio.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/stats.h"
#include "core/student_t.h"

namespace hb {

namespace {

// P(Bin(n, 1/2) <= j), summed in log space so n in the thousands does not overflow.
double binomial_cdf_half(int n, int j) {
  double total = 0;
  for (int i = 0; i <= j; ++i)
    total += std::exp(std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) -
                      n * std::log(2.0));
  return std::min(total, 1.0);
}

}  // namespace

RatioInterval paired_ratio(std::span<const double> a, std::span<const double> b, double coverage) {
  std::vector<double> r;
  const size_t n_rounds = std::min(a.size(), b.size());
  for (size_t i = 0; i < n_rounds; ++i)
    if (a[i] > 0 && b[i] > 0 && std::isfinite(a[i]) && std::isfinite(b[i]))
      r.push_back(b[i] / a[i]);
  return median_interval(r, coverage);
}

RatioInterval repeated_ratio(std::span<const double> a, std::span<const double> b,
                             std::span<const int64_t> rounds_per_pass, double coverage,
                             const PassSpread* spread) {
  RatioInterval out = paired_ratio(a, b, coverage);
  const size_t n_rounds = std::min(a.size(), b.size());
  size_t total = 0;
  for (int64_t n : rounds_per_pass) total += n > 0 ? static_cast<size_t>(n) : 0;
  if (rounds_per_pass.size() < 2 || total != n_rounds) return out;
  std::vector<double> logs;  // each pass's own median ratio, in log terms
  size_t at = 0;
  for (int64_t n : rounds_per_pass) {
    const auto count = static_cast<size_t>(std::max<int64_t>(n, 0));
    const RatioInterval pass = paired_ratio(a.subspan(at, count), b.subspan(at, count), coverage);
    at += count;
    if (pass.pairs > 0) logs.push_back(std::log(pass.ratio));
  }
  if (logs.size() < 2) return out;
  const double k = static_cast<double>(logs.size());
  double mean = 0, var = 0;
  for (double v : logs) mean += v / k;
  for (double v : logs) var += (v - mean) * (v - mean) / (k - 1);
  int df = static_cast<int>(logs.size()) - 1;
  if (spread && spread->df > 0 && spread->passes == static_cast<int>(logs.size())) {
    var = 2 * spread->variance;  // a difference of two contenders' pass levels
    df = spread->df;
  }
  const double half = student_t_quantile(0.5 + coverage / 2, df) * std::sqrt(var / k);
  out.low = std::min(out.low, std::exp(mean - half));
  out.high = std::max(out.high, std::exp(mean + half));
  out.coverage = std::max(out.coverage, coverage);  // the t interval's is nominal (normal logs)
  out.passes = static_cast<int>(logs.size());
  return out;
}

PassSpread pass_spread(const std::vector<std::vector<double>>& rounds,
                       std::span<const int64_t> rounds_per_pass) {
  PassSpread out;
  const size_t contenders = rounds.size(), passes = rounds_per_pass.size();
  if (contenders < 2 || passes < 2) return out;
  size_t n_rounds = 0;
  for (int64_t n : rounds_per_pass) n_rounds += n > 0 ? static_cast<size_t>(n) : 0;
  for (const auto& r : rounds)
    if (r.size() != n_rounds) return out;
  // level[c][p]: contender c's median log figure in pass p, each round's mean taken out.
  std::vector<std::vector<double>> level(contenders, std::vector<double>(passes, 0));
  size_t at = 0;
  for (size_t p = 0; p < passes; ++p) {
    const auto count = static_cast<size_t>(std::max<int64_t>(rounds_per_pass[p], 0));
    std::vector<std::vector<double>> rel(contenders);
    for (size_t i = at; i < at + count; ++i) {
      double sum = 0;
      bool all = true;
      for (const auto& r : rounds) {
        all = all && r[i] > 0 && std::isfinite(r[i]);
        if (all) sum += std::log(r[i]);
      }
      if (!all) continue;  // a round some contender lacks compares nothing
      const double mean = sum / static_cast<double>(contenders);
      for (size_t c = 0; c < contenders; ++c) rel[c].push_back(std::log(rounds[c][i]) - mean);
    }
    at += count;
    if (rel[0].empty()) return out;  // a pass with no complete round: no level to compare
    for (size_t c = 0; c < contenders; ++c) {
      std::sort(rel[c].begin(), rel[c].end());
      level[c][p] = quantile(rel[c], 0.5);
    }
  }
  // The two-way table's residual: level less its contender's and its pass's means.
  std::vector<double> by_contender(contenders, 0), by_pass(passes, 0);
  double grand = 0;
  const double nc = static_cast<double>(contenders), np = static_cast<double>(passes);
  for (size_t c = 0; c < contenders; ++c)
    for (size_t p = 0; p < passes; ++p) {
      by_contender[c] += level[c][p] / np;
      by_pass[p] += level[c][p] / nc;
      grand += level[c][p] / (nc * np);
    }
  double ss = 0;
  for (size_t c = 0; c < contenders; ++c)
    for (size_t p = 0; p < passes; ++p) {
      const double e = level[c][p] - by_contender[c] - by_pass[p] + grand;
      ss += e * e;
    }
  out.df = static_cast<int>((contenders - 1) * (passes - 1));
  out.variance = ss / out.df;
  out.passes = static_cast<int>(passes);
  return out;
}

RatioInterval median_interval(std::span<const double> values, double coverage) {
  std::vector<double> r;
  for (double v : values)
    if (v > 0 && std::isfinite(v)) r.push_back(v);
  RatioInterval out;
  out.pairs = static_cast<int>(r.size());
  if (r.empty()) return out;
  std::sort(r.begin(), r.end());
  out.ratio = quantile(r, 0.5);
  const int n = out.pairs;
  // k = 1 is [min, max]; raise it while the coverage stays at or above the asked one.
  int k = 1;
  while (k + 1 <= (n + 1) / 2 && 1 - 2 * binomial_cdf_half(n, k) >= coverage) ++k;
  out.coverage = n >= 2 ? 1 - 2 * binomial_cdf_half(n, k - 1) : 0;
  out.low = r[static_cast<size_t>(k - 1)];
  out.high = r[static_cast<size_t>(n - k)];
  return out;
}

}  // namespace hb
