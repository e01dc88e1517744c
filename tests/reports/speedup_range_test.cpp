// Issue 46, item 7: the system's speedup range over each baseline across a report's settings,
// with the tokens each attended and the recall each reached, beside the paper's range.
#include <gtest/gtest.h>

#include <regex>

#include "fixtures.h"
#include "reports/speedup_range.h"
#include "reports/tables.h"

namespace hb::reports {
namespace {

using testing::make_failed_point;
using testing::make_point;
using testing::make_report;

Point on(Point p, const std::string& platform, double attended, double recall) {
  p.axes.extra["platform"] = platform;
  p.attended_tokens =
      AttendedTokens{attended, static_cast<int64_t>(attended), static_cast<int64_t>(attended)};
  p.accuracy.steps_scored = 4;
  p.accuracy.mass_recall = recall;
  return p;
}

// hybridgen, h2o and offload at 4k and 8k on two platforms; offload is oom on "small" at 8k.
// Times are exact (no noise), so each ratio is known: h2o / hybridgen = 2, 3, 0.5, 4;
// offload / hybridgen = 10 at every timed setting.
Report crafted() {
  Report r = make_report();
  r.points.clear();
  const struct {
    const char* platform;
    int64_t len;
    double sys, h2o;
  } rows[] = {{"big", 4096, 1e6, 2e6},
              {"big", 8192, 1e6, 3e6},
              {"small", 4096, 2e6, 1e6},
              {"small", 8192, 1e6, 4e6}};
  for (const auto& x : rows) {
    r.points.push_back(on(make_point("hybridgen", x.len, x.sys, 0), x.platform, 800, 0.97));
    r.points.push_back(
        on(make_point("h2o", x.len, x.h2o, 0), x.platform, x.len == 4096 ? 820 : 1640, 0.9));
    r.points.push_back(
        x.len == 8192 && std::string(x.platform) == "small"
            ? on(make_failed_point("offload", x.len, PointStatus::oom, "KV"), x.platform, 0, 1)
            : on(make_point("offload", x.len, 10 * x.sys, 0), x.platform, x.len, 1));
  }
  r.speedups = compute_speedups(r.points);
  return r;
}

TEST(SpeedupRange, PerBaselineLowHighWhereAndWhatEachAttended) {
  const auto rows = speedup_ranges(crafted());
  ASSERT_EQ(rows.size(), 2u);  // full-gpu absent; only baselines are rows
  const SpeedupRange& h2o = rows[0];
  EXPECT_EQ(h2o.system, "hybridgen");
  EXPECT_EQ(h2o.baseline, "h2o");
  EXPECT_EQ(h2o.compared, 4);
  EXPECT_NEAR(h2o.low, 0.5, 1e-9);
  EXPECT_NEAR(h2o.high, 4.0, 1e-9);
  EXPECT_EQ(h2o.low_at, "llama-3-8b 4k b1 small");
  EXPECT_EQ(h2o.high_at, "llama-3-8b 8k b1 small");
  ASSERT_TRUE(h2o.baseline_attended);
  EXPECT_EQ(*h2o.baseline_attended, (std::pair{820.0, 1640.0}));
  EXPECT_EQ(*h2o.system_recall, (std::pair{0.97, 0.97}));
  EXPECT_EQ(*h2o.baseline_recall, (std::pair{0.9, 0.9}));
  EXPECT_TRUE(h2o.not_run.empty());

  const SpeedupRange& off = rows[1];
  EXPECT_EQ(off.baseline, "offload");
  EXPECT_EQ(off.compared, 3);
  EXPECT_NEAR(off.low, 10.0, 1e-9);
  EXPECT_NEAR(off.high, 10.0, 1e-9);
  EXPECT_EQ(off.not_run, (std::vector<std::string>{"oom"}));
}

TEST(SpeedupRange, MarkdownStatesTheRangeBesideThePapers) {
  // Cells padded to their column's width, read with single spaces.
  const std::string md = std::regex_replace(markdown_report(crafted()), std::regex(" +"), " ");
  const auto at = md.find("## hybridgen's speedup over each baseline");
  ASSERT_NE(at, std::string::npos) << md;
  EXPECT_LT(at, md.find("## llama-3-8b"));  // before the per-setting tables
  EXPECT_NE(md.find("1.41x-3.20x"), std::string::npos);
  EXPECT_NE(md.find("| hybridgen | h2o | 4 | 0.50x-4.00x | llama-3-8b 4k b1 small | "
                    "llama-3-8b 8k b1 small | 800 | 820-1.6k | 97.0% | 90.0% | - |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| hybridgen | offload | 3 | 10.0x |"), std::string::npos) << md;
  EXPECT_NE(md.find("| oom: 1 |"), std::string::npos) << md;
  EXPECT_EQ(md.find("Settings without the system"), std::string::npos);
}

TEST(SpeedupRange, SettingsWithoutTheSystemAreListedWithWhy) {
  Report r = crafted();
  for (Point& p : r.points)
    if (p.axes.strategy == "hybridgen" && p.axes.seq_len == 8192 &&
        p.axes.extra.at("platform") == "big")
      p = on(make_failed_point("hybridgen", 8192, PointStatus::oom, "window does not fit"), "big",
             0, 1);
  r.speedups = compute_speedups(r.points);
  EXPECT_EQ(speedup_ranges(r)[0].compared, 3);
  const std::string md = speedup_range_markdown(r);
  EXPECT_NE(md.find("- hybridgen at llama-3-8b 8k b1 big: window does not fit"), std::string::npos)
      << md;
}

TEST(SpeedupRange, NoSectionForOneSettingOrWithoutTheSystem) {
  Report one = crafted();
  std::erase_if(one.points, [](const Point& p) {
    return p.axes.seq_len != 4096 || p.axes.extra.at("platform") != "big";
  });
  one.speedups = compute_speedups(one.points);
  EXPECT_EQ(speedup_range_markdown(one), "");
  Report no_system = crafted();
  std::erase_if(no_system.points, [](const Point& p) { return p.axes.strategy == "hybridgen"; });
  EXPECT_TRUE(speedup_ranges(no_system).empty());
  EXPECT_EQ(speedup_range_markdown(no_system), "");
}

}  // namespace
}  // namespace hb::reports
