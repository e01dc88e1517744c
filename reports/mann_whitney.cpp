#include "reports/mann_whitney.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <vector>

namespace hb::reports {

namespace {

// Doubled mid-ranks (integers, so the exact distribution can be indexed by them) of the pooled
// samples, x first, plus the tie correction term sum(t^3 - t) over tie groups.
struct Ranks {
  std::vector<int64_t> doubled;  // pooled order: x[0..nx), then y[0..ny)
  double tie_term = 0;
};

Ranks doubled_midranks(std::span<const double> x, std::span<const double> y) {
  const size_t n = x.size() + y.size();
  std::vector<std::pair<double, size_t>> v;
  v.reserve(n);
  for (size_t i = 0; i < x.size(); ++i) v.emplace_back(x[i], i);
  for (size_t i = 0; i < y.size(); ++i) v.emplace_back(y[i], x.size() + i);
  std::sort(v.begin(), v.end());
  Ranks r;
  r.doubled.assign(n, 0);
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && v[j].first == v[i].first) ++j;
    // Ranks i+1 .. j share the mid-rank (i+1+j)/2; doubled: i+1+j.
    for (size_t k = i; k < j; ++k) r.doubled[v[k].second] = static_cast<int64_t>(i + 1 + j);
    const double t = static_cast<double>(j - i);
    r.tie_term += t * t * t - t;
    i = j;
  }
  return r;
}

double u_of_x(const Ranks& r, size_t nx) {
  int64_t sum2 = 0;
  for (size_t i = 0; i < nx; ++i) sum2 += r.doubled[i];
  const double n = static_cast<double>(nx);
  return static_cast<double>(sum2) / 2.0 - n * (n + 1) / 2.0;
}

}  // namespace

double mann_whitney_exact_p(std::span<const double> x, std::span<const double> y) {
  const size_t nx = x.size(), ny = y.size(), n = nx + ny;
  if (nx == 0 || ny == 0) return 1.0;
  const Ranks r = doubled_midranks(x, y);
  // ways[j][s]: ways to pick j of the pooled values with doubled-rank sum s. Under the null
  // every choice of which nx values are "x" is equally likely (permutation distribution).
  int64_t max_sum = 0;
  for (auto d : r.doubled) max_sum += d;
  std::vector<std::vector<double>> ways(nx + 1,
                                        std::vector<double>(static_cast<size_t>(max_sum) + 1, 0.0));
  ways[0][0] = 1;
  for (size_t k = 0; k < n; ++k) {
    const auto d = static_cast<size_t>(r.doubled[k]);
    for (size_t j = std::min(k + 1, nx); j >= 1; --j)
      for (size_t s = static_cast<size_t>(max_sum); s >= d; --s) ways[j][s] += ways[j - 1][s - d];
  }
  int64_t observed = 0;
  for (size_t i = 0; i < nx; ++i) observed += r.doubled[i];
  // Expected doubled sum nx*(n+1); two-sided = at least as far from it as observed.
  const int64_t expected = static_cast<int64_t>(nx * (n + 1));
  const int64_t dist = std::llabs(observed - expected);
  double total = 0, extreme = 0;
  for (size_t s = 0; s <= static_cast<size_t>(max_sum); ++s) {
    total += ways[nx][s];
    if (std::llabs(static_cast<int64_t>(s) - expected) >= dist) extreme += ways[nx][s];
  }
  return std::min(1.0, extreme / total);
}

double mann_whitney_normal_p(std::span<const double> x, std::span<const double> y) {
  const double nx = static_cast<double>(x.size()), ny = static_cast<double>(y.size()), n = nx + ny;
  if (x.empty() || y.empty()) return 1.0;
  const Ranks r = doubled_midranks(x, y);
  const double mu = nx * ny / 2.0;
  const double var = nx * ny / 12.0 * ((n + 1) - r.tie_term / (n * (n - 1)));
  if (var <= 0) return 1.0;  // every value tied: no evidence of a difference
  // Continuity correction: U moves in steps of 1/2 (ties) or 1, the normal curve does not.
  const double z = std::max(0.0, std::fabs(u_of_x(r, x.size()) - mu) - 0.5) / std::sqrt(var);
  return std::min(1.0, std::erfc(z / std::sqrt(2.0)));
}

UTest mann_whitney_u(std::span<const double> x, std::span<const double> y) {
  UTest t;
  if (x.empty() || y.empty()) return t;
  const double nxny = static_cast<double>(x.size()) * static_cast<double>(y.size());
  t.u_x = u_of_x(doubled_midranks(x, y), x.size());
  t.u_y = nxny - t.u_x;
  t.u = std::min(t.u_x, t.u_y);
  t.prob_x_greater = t.u_x / nxny;
  t.exact = x.size() <= kExactMaxSamples && y.size() <= kExactMaxSamples;
  t.p_value = t.exact ? mann_whitney_exact_p(x, y) : mann_whitney_normal_p(x, y);
  return t;
}

}  // namespace hb::reports
