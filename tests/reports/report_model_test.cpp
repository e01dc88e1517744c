#include "reports/report.h"

#include <gtest/gtest.h>

#include "fixtures.h"

namespace hb::reports {
namespace {

using testing::make_failed_point;
using testing::make_point;

TEST(ReportModel, SchemaString) { EXPECT_EQ(schema_string(), "hybridbench.report/2"); }

TEST(ReportModel, KeysSeparateStrategyFromGroup) {
  Point a = make_point("full-gpu", 4096, 1e6), b = make_point("cpu-only", 4096, 2e6);
  EXPECT_EQ(a.axes.group_key(), b.axes.group_key());
  EXPECT_NE(a.axes.key(), b.axes.key());
  b.axes.extra["placement"] = "cxl";
  EXPECT_NE(a.axes.group_key(), b.axes.group_key());
}

TEST(ReportModel, SpeedupsPairEveryTimedStrategyAtTheSamePoint) {
  std::vector<Point> pts = {make_point("a", 4096, 1e6, 0.03), make_point("b", 4096, 3e6, 0.04),
                            make_point("c", 4096, 2e6),
                            make_failed_point("d", 4096, PointStatus::oom, "too big"),
                            make_point("a", 8192, 2e6)};
  pts[1].provenance = Provenance::modeled;
  const auto s = compute_speedups(pts);
  ASSERT_EQ(s.size(), 6u);  // a,b,c at 4096 in ordered pairs; d is oom; 8192 has one strategy
  const Speedup* ab = nullptr;
  for (const auto& x : s)
    if (x.strategy_a == "a" && x.strategy_b == "b") ab = &x;
  ASSERT_NE(ab, nullptr);
  EXPECT_NEAR(ab->ratio, pts[1].step.summary.median / pts[0].step.summary.median, 1e-12);
  EXPECT_NEAR(ab->ratio, 3.0, 0.1);
  EXPECT_NEAR(
      ab->rel_noise,
      std::hypot(robust_rel_noise(pts[0].step.summary), robust_rel_noise(pts[1].step.summary)),
      1e-12);
  EXPECT_EQ(ab->provenance, Provenance::modeled);
  for (const auto& x : s) EXPECT_NE(x.strategy_a, "d");
}

TEST(ReportModel, RobustNoiseMatchesStdevForNormalDataButIgnoresOutliers) {
  auto samples = testing::noisy_samples(1e6, 0.05, 4000, 3);
  const auto clean = summarize(samples);
  EXPECT_NEAR(robust_rel_noise(clean), clean.rel_stdev(), 0.005);
  for (int i = 0; i < 40; ++i) samples[i * 100] = 2e7;  // 1% of steps preempted, 20x longer
  const auto dirty = summarize(samples);
  EXPECT_GT(dirty.rel_stdev(), 1.0);
  EXPECT_NEAR(robust_rel_noise(dirty), 0.05, 0.01);
}

TEST(ReportModel, HostContextIsFilled) {
  ReportContext c;
  fill_host_context(c);
  EXPECT_FALSE(c.tool_version.empty());
  EXPECT_EQ(c.date_utc.size(), 20u);  // 2025-01-31T12:34:56Z
  EXPECT_EQ(c.date_utc.back(), 'Z');
  EXPECT_FALSE(c.host.empty());
  EXPECT_FALSE(c.simd_level.empty());
}

// Issue 33: under --tie-margin a ratio within [1/(1+m), 1+m] is a tie even when its interval
// excludes 1, paired or not; a report without the echo (older ones) judges on the interval alone.
TEST(ReportModel, ATieMarginWidensWhatCountsAsATie) {
  Speedup paired;
  paired.ratio = 1.025, paired.ci_low = 1.01, paired.ci_high = 1.04, paired.rounds = 6;
  EXPECT_TRUE(paired.decided());
  EXPECT_FALSE(paired.decided(0.03));
  EXPECT_TRUE(paired.decided(0.005));
  Speedup slower = paired;  // the same gap seen from the other side
  slower.ratio = 1 / 1.025, slower.ci_low = 1 / 1.04, slower.ci_high = 1 / 1.01;
  EXPECT_TRUE(slower.decided());
  EXPECT_FALSE(slower.decided(0.03));
  Speedup unpaired;
  unpaired.ratio = 1.05, unpaired.rel_noise = 0.01;  // 2 x noise = 2%: decided at 0
  EXPECT_TRUE(unpaired.decided());
  EXPECT_TRUE(unpaired.decided(0.03));
  EXPECT_FALSE(unpaired.decided(0.06));
  Speedup wide = paired;  // beyond the margin but not significant: still a tie
  wide.ratio = 1.08, wide.ci_low = 0.99, wide.ci_high = 1.2;
  EXPECT_FALSE(wide.decided(0.03));
  ReportContext c;
  EXPECT_EQ(tie_margin(c), 0);
  c.sweep["tie_margin_fraction"] = "0.03";
  EXPECT_DOUBLE_EQ(tie_margin(c), 0.03);
  c.sweep["tie_margin_fraction"] = "garbage";
  EXPECT_EQ(tie_margin(c), 0);
}

}  // namespace
}  // namespace hb::reports
