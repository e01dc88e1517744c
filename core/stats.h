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
  double rel_stdev() const { return mean != 0 ? stdev / mean : 0; }  // see robust_rel_noise
  double iqr() const { return q3 - q1; }
};

// Linear-interpolated quantile (q in [0,1]) of unsorted samples; NaN for an empty set.
double quantile(std::span<const double> samples, double q);
SampleSummary summarize(std::span<const double> samples);

// The one noise statistic of the project: IQR / (1.349 x median). `run`'s stopping rule
// (--max-noise) converges on it, `report` prints it and `compare` judges by it. For normally
// distributed samples it equals the relative stdev, but a few preempted or interrupted steps
// (common on a shared machine) do not inflate it: relative stdev of 100%+ with a 4% IQR was seen
// on a busy 2-core host. 0 when the median is not positive.
double robust_rel_noise(const SampleSummary& s);

// The median of each consecutive block of `samples` (block i holds sizes[i] of them; a block
// beyond the samples' end is cut short, an empty one skipped): one figure per round of a run.
std::vector<double> block_medians(std::span<const double> samples, std::span<const int64_t> sizes);

}  // namespace hb
