#include "core/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace hb {

static double sorted_quantile(const std::vector<double>& s, double q) {
  if (s.empty()) return std::numeric_limits<double>::quiet_NaN();
  const double pos = q * static_cast<double>(s.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, s.size() - 1);
  return s[lo] + (s[hi] - s[lo]) * (pos - static_cast<double>(lo));
}

double quantile(std::span<const double> samples, double q) {
  std::vector<double> s(samples.begin(), samples.end());
  std::sort(s.begin(), s.end());
  return sorted_quantile(s, q);
}

SampleSummary summarize(std::span<const double> samples) {
  SampleSummary r;
  r.count = static_cast<int64_t>(samples.size());
  if (samples.empty()) return r;
  std::vector<double> s(samples.begin(), samples.end());
  std::sort(s.begin(), s.end());
  double sum = 0;
  for (double x : s) sum += x;
  r.mean = sum / static_cast<double>(s.size());
  double ss = 0;
  for (double x : s) ss += (x - r.mean) * (x - r.mean);
  r.stdev = s.size() > 1 ? std::sqrt(ss / static_cast<double>(s.size() - 1)) : 0.0;
  r.min = s.front();
  r.max = s.back();
  r.median = sorted_quantile(s, 0.5);
  r.p10 = sorted_quantile(s, 0.1);
  r.p90 = sorted_quantile(s, 0.9);
  r.q1 = sorted_quantile(s, 0.25);
  r.q3 = sorted_quantile(s, 0.75);
  return r;
}

double robust_rel_noise(const SampleSummary& s) {
  return s.median > 0 ? s.iqr() / (1.349 * s.median) : 0.0;
}

std::vector<double> block_medians(std::span<const double> samples, std::span<const int64_t> sizes) {
  std::vector<double> m;
  size_t at = 0;
  for (int64_t n : sizes) {
    const size_t end = std::min(samples.size(), at + static_cast<size_t>(std::max<int64_t>(n, 0)));
    if (end > at) m.push_back(summarize(samples.subspan(at, end - at)).median);
    at = end;
  }
  return m;
}

}  // namespace hb
