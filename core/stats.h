#pragma once
// Summary statistics of timing samples (nvbench / Google Benchmark style).
#include <cstdint>
#include <span>
#include <vector>

namespace hb {

struct SampleSummary {
  int64_t count = 0;
  double mean = 0, stdev = 0, min = 0, max = 0;
  double median = 0, p10 = 0, p90 = 0, q1 = 0, q3 = 0;
  double rel_stdev() const { return mean != 0 ? stdev / mean : 0; }  // "noise"
  double iqr() const { return q3 - q1; }
};

// Linear-interpolated quantile (q in [0,1]) of unsorted samples; NaN for an empty set.
double quantile(std::span<const double> samples, double q);
SampleSummary summarize(std::span<const double> samples);

}  // namespace hb
