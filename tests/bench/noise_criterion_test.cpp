// Issue 18: one noise statistic. run's stopping rule (NoiseCriterion) converges on the same
// robust noise, IQR / (1.349 median), that report prints and compare judges, so a point `run`
// calls converged is one `report` does not call noisy, and a few preempted steps do not keep a
// quiet point sampling until --decode-steps runs out.
#include <gtest/gtest.h>

#include <vector>

#include "core/stats.h"
#include "reports/report.h"
#include "bench/noise_criterion.h"

namespace hb::bench {
namespace {

bool converges(const std::vector<double>& samples_ns, double max_noise) {
  StopCriteria stop;
  stop.min_samples = 3;
  stop.max_noise = max_noise;
  NoiseCriterion rule(stop);
  int i = 0;
  for (double ns : samples_ns) rule.add({i++, ns, 0.001 * i, 0});
  return rule.is_finished();
}

// 1 ms steps with a +-1% wobble (deterministic).
std::vector<double> quiet_steps(int n) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(1e6 * (1.0 + 0.01 * ((i % 5) - 2) / 2.0));
  return v;
}

TEST(NoiseCriterion, UsesTheRobustNoiseThatReportAndCompareUse) {
  // reports' robust_rel_noise is core's: one function, not two copies that could drift apart.
  EXPECT_EQ(&reports::robust_rel_noise, &hb::robust_rel_noise);

  // Two preempted steps (20x longer) among 40 quiet ones: relative stdev over 100%, robust
  // noise about 1%. The rule converges, as report's figure says it should.
  std::vector<double> v = quiet_steps(40);
  v[7] = v[23] = 2e7;
  const SampleSummary s = summarize(v);
  ASSERT_GT(s.rel_stdev(), 1.0);
  ASSERT_LT(robust_rel_noise(s), 0.02);
  EXPECT_TRUE(converges(v, 0.05));

  // A spread step time (about 20% robust noise) does not converge at 5% but does at 30%.
  std::vector<double> wide;
  for (int i = 0; i < 40; ++i) wide.push_back(1e6 * (0.7 + 0.6 * ((i * 7) % 40) / 39.0));
  const double noise = robust_rel_noise(summarize(wide));
  ASSERT_GT(noise, 0.05);
  ASSERT_LT(noise, 0.3);
  EXPECT_FALSE(converges(wide, 0.05));
  EXPECT_TRUE(converges(wide, 0.3));
  // The decision is exactly "robust noise <= --max-noise".
  EXPECT_TRUE(converges(wide, noise * 1.0001));
  EXPECT_FALSE(converges(wide, noise * 0.9999));
}

TEST(NoiseCriterion, WaitsForMinSamples) {
  EXPECT_FALSE(converges(quiet_steps(2), 0.05));
  EXPECT_TRUE(converges(quiet_steps(3), 0.05));
}

}  // namespace
}  // namespace hb::bench
