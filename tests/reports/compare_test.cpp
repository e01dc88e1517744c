#include "reports/compare.h"

#include <cstdlib>
#include <iostream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "fixtures.h"
#include "reports/compare_render.h"

namespace hb::reports {
namespace {

using testing::make_failed_point;
using testing::make_point;
using testing::make_report;
using testing::with_passes;

Report single(Point p) {
  Report r = make_report();
  r.points = {std::move(p)};
  return r;
}

const PointComparison& only(const CompareResult& r) {
  EXPECT_EQ(r.points.size(), 1u);
  return r.points.at(0);
}

TEST(Compare, IdenticalRunsPass) {
  const Report r = make_report();
  const CompareResult c = compare_reports(r, r, {});
  EXPECT_FALSE(c.has_regression());
  EXPECT_EQ(c.count(Verdict::same), 5);     // the five timed points
  EXPECT_EQ(c.count(Verdict::untimed), 1);  // full-gpu oom at 16k in both
  EXPECT_TRUE(c.warnings.empty());
}

TEST(Compare, RepeatedRunsFromTheSameDistributionPass) {
  // Fresh samples (other seeds) with the same median and 1% noise: never a regression.
  for (uint64_t seed = 2; seed < 12; ++seed) {
    const auto c = compare_reports(single(make_point("x", 4096, 1e6, 0.01, 30, 1)),
                                   single(make_point("x", 4096, 1e6, 0.01, 30, seed)), {});
    EXPECT_FALSE(c.has_regression()) << seed;
    EXPECT_NE(only(c).verdict, Verdict::slower) << seed;
  }
}

// 30 samples in 5 passes of 6, as `run --repetitions 5` records them.
Point pooled(double median_ns, double noise, uint64_t seed) {
  return with_passes(make_point("x", 4096, median_ns, noise, 30, seed));
}

TEST(Compare, PlantedTwentyPercentSlowdownIsCaught) {
  const auto c = compare_reports(single(pooled(1e6, 0.02, 1)), single(pooled(1.2e6, 0.02, 2)), {});
  const auto& p = only(c);
  EXPECT_EQ(p.verdict, Verdict::slower);
  EXPECT_FALSE(p.single_pass);
  EXPECT_NEAR(p.change, 0.2, 0.02);
  EXPECT_LT(p.p_value, 0.01);  // 5 vs 5 pass medians fully separated: exact p = 2/252
  EXPECT_TRUE(p.slowdown_regression);
  EXPECT_TRUE(c.has_regression());
  EXPECT_TRUE(c.deciding_command.empty());
}

TEST(Compare, SinglePassDifferenceIsInconclusiveWithTheCommandThatDecides) {
  // The same 20% with one pass a side: significant on the steps, but two runs of one binary
  // differed by that much here, so it is neither a regression nor "same".
  const auto c = compare_reports(single(make_point("x", 4096, 1e6, 0.02, 30, 1)),
                                 single(make_point("x", 4096, 1.2e6, 0.02, 30, 2)), {});
  const auto& p = only(c);
  EXPECT_EQ(p.verdict, Verdict::inconclusive);
  EXPECT_TRUE(p.single_pass);
  EXPECT_LT(p.p_value, 1e-6);
  EXPECT_FALSE(c.has_regression());
  EXPECT_EQ(c.deciding_command, "hybridbench run --seq-len 4k:16k:x2 --repetitions 5");
  ASSERT_FALSE(c.warnings.empty());
  EXPECT_NE(c.warnings.front().find("1 point(s) INCONCLUSIVE"), std::string::npos);
  EXPECT_NE(c.warnings.front().find(c.deciding_command), std::string::npos);
  EXPECT_EQ(c.geomean.verdict, Verdict::inconclusive);
  // Faster is as unproven as slower.
  const auto f = compare_reports(single(make_point("x", 4096, 1e6, 0.02, 30, 1)),
                                 single(make_point("x", 4096, 0.8e6, 0.02, 30, 2)), {});
  EXPECT_EQ(only(f).verdict, Verdict::inconclusive);
  // One side pooled is still one pass on the other: its drift is unmeasured.
  const auto mixed = compare_reports(single(pooled(1e6, 0.02, 1)),
                                     single(make_point("x", 4096, 1.2e6, 0.02, 30, 2)), {});
  EXPECT_EQ(only(mixed).verdict, Verdict::inconclusive);
  // Not even a doubling: between runs on a shared machine the load alone changed it 2.6x.
  const auto twice = compare_reports(single(make_point("x", 4096, 1e6, 0.02, 30, 1)),
                                     single(make_point("x", 4096, 2e6, 0.02, 30, 2)), {});
  EXPECT_EQ(only(twice).verdict, Verdict::inconclusive);
  EXPECT_EQ(only(twice).notes.back(), "single pass: drift between runs can explain it");
  // --drift-allowance 0 judges single passes as before.
  CompareOptions judge;
  judge.drift_allowance = 0;
  const auto j = compare_reports(single(make_point("x", 4096, 1e6, 0.02, 30, 1)),
                                 single(make_point("x", 4096, 1.2e6, 0.02, 30, 2)), judge);
  EXPECT_EQ(only(j).verdict, Verdict::slower);
  EXPECT_TRUE(j.has_regression());
  EXPECT_TRUE(j.deciding_command.empty());
}

TEST(Compare, TheDecidingCommandReplacesTheRunsRepetitions) {
  Report o = single(make_point("x", 4096, 1e6, 0.02, 30, 1)),
         n = single(make_point("x", 4096, 1.2e6, 0.02, 30, 2));
  n.context.command_line = "hybridbench run --repetitions 2 --seq-len 4k --out n.json";
  EXPECT_EQ(compare_reports(o, n, {}).deciding_command,
            "hybridbench run --seq-len 4k --out n.json --repetitions 5");
  n.context.command_line = "";
  EXPECT_EQ(compare_reports(o, n, {}).deciding_command, "hybridbench run ... --repetitions 5");
  CompareOptions bad;
  bad.drift_allowance = -0.1;
  EXPECT_THROW(compare_reports(o, n, bad), Error);
}

TEST(Compare, FasterIsNotARegression) {
  const auto c = compare_reports(single(pooled(1e6, 0.02, 1)), single(pooled(0.8e6, 0.02, 2)), {});
  EXPECT_EQ(only(c).verdict, Verdict::faster);
  EXPECT_FALSE(c.has_regression());
}

TEST(Compare, SignificantSlowdownUnderTheThresholdIsReportedButPasses) {
  const auto c =
      compare_reports(single(pooled(1e6, 0.005, 1)), single(pooled(1.03e6, 0.005, 2)), {});
  EXPECT_EQ(only(c).verdict, Verdict::slower);
  EXPECT_FALSE(c.has_regression());
}

TEST(Compare, TinySignificantChangeIsSame) {
  // 1% shift with 2000 samples of 0.2% noise: significant, but under --min-effect.
  const auto c = compare_reports(single(make_point("x", 4096, 1e6, 0.002, 2000, 1)),
                                 single(make_point("x", 4096, 1.01e6, 0.002, 2000, 2)), {});
  EXPECT_LT(only(c).p_value, 0.01);
  EXPECT_EQ(only(c).verdict, Verdict::same);
}

TEST(Compare, LargeButNoisyChangeIsNoisy) {
  // 25% slower on paper, but 5 samples of 30% noise cannot show it.
  const auto c = compare_reports(single(make_point("x", 4096, 1e6, 0.3, 5, 1)),
                                 single(make_point("x", 4096, 1.25e6, 0.3, 5, 2)), {});
  EXPECT_GT(only(c).p_value, 0.01);
  EXPECT_EQ(only(c).verdict, Verdict::noisy);
  EXPECT_FALSE(c.has_regression());
}

TEST(Compare, NoChangeUnderHighNoiseIsNoisyNotSame) {
  const auto c = compare_reports(single(make_point("x", 4096, 1e6, 0.3, 8, 1)),
                                 single(make_point("x", 4096, 1e6, 0.3, 8, 1)), {});
  EXPECT_EQ(only(c).verdict, Verdict::noisy);
}

// Samples as a busy shared machine produces them: a load-dependent base, wide spread, and a few
// steps preempted for 10x longer.
Point busy_point(double median_ns, double spread, uint64_t seed) {
  Point p = make_point("x", 4096, median_ns, spread, 22, seed);
  auto v = p.step.samples_ns;
  for (size_t i = 0; i < v.size(); i += 7) v[i] *= 10;
  static_cast<Timing&>(p.step) = Timing::from_samples(v);
  return p;
}

TEST(Compare, IdenticalCodeOnABusyMachineIsNoisyNotSlower) {
  // Second run met 15% more load: significant to the U test, but within the runs' noise.
  const auto c =
      compare_reports(single(busy_point(1e6, 0.2, 1)), single(busy_point(1.15e6, 0.2, 2)), {});
  EXPECT_EQ(only(c).verdict, Verdict::noisy);
  EXPECT_TRUE(only(c).too_noisy);
  EXPECT_FALSE(c.has_regression());
  ASSERT_FALSE(c.warnings.empty());
  EXPECT_NE(c.warnings.back().find("busy"), std::string::npos);
}

TEST(Compare, DoublingIsCaughtEvenOnABusyMachine) {
  // One pass a side, with --drift-allowance 0.5: a doubling is beyond it.
  CompareOptions opt;
  opt.drift_allowance = 0.5;
  const auto c =
      compare_reports(single(busy_point(1e6, 0.2, 1)), single(busy_point(2e6, 0.2, 2)), opt);
  EXPECT_EQ(only(c).verdict, Verdict::slower);
  EXPECT_TRUE(c.has_regression());
  EXPECT_EQ(only(c).notes.back(), "single pass, beyond --drift-allowance 50.0%");
}

// run --repetitions: 5 passes of 10 steps; each pass met its own machine state (a level drawn
// from `levels`), the steps inside a pass are quiet. The passes are the replicates.
Point pooled_point(double median_ns, const std::vector<double>& levels, uint64_t seed) {
  Point p = make_point("x", 4096, median_ns, 0.01, 1, seed);
  std::vector<double> v;
  for (size_t i = 0; i < levels.size(); ++i) {
    const auto pass =
        make_point("x", 4096, median_ns * levels[i], 0.01, 10, seed * 31 + i).step.samples_ns;
    v.insert(v.end(), pass.begin(), pass.end());
    p.step.pass_sizes.push_back(10);
  }
  static_cast<Timing&>(p.step) = Timing::from_samples(v);
  return p;
}

TEST(Compare, PooledRunsAreJudgedOnTheirPassMedians) {
  // Identical code, passes 15% apart: the samples' U test would call it significant (quiet steps,
  // shifted medians); on the pass medians it is not.
  const auto same = compare_reports(single(pooled_point(1e6, {0.92, 1.0, 0.95, 1.05, 0.97}, 1)),
                                    single(pooled_point(1e6, {1.08, 1.0, 1.1, 0.96, 1.04}, 2)), {});
  EXPECT_NE(only(same).verdict, Verdict::slower);
  EXPECT_FALSE(same.has_regression());
  ASSERT_FALSE(only(same).notes.empty());
  EXPECT_EQ(only(same).notes.back(), "pass medians 5 vs 5");
  // A 20% slowdown moves every pass: caught although the pooled noise is above --max-noise.
  const auto slow =
      compare_reports(single(pooled_point(1e6, {0.92, 1.0, 0.95, 1.05, 0.97}, 1)),
                      single(pooled_point(1.2e6, {0.92, 1.0, 0.95, 1.05, 0.97}, 3)), {});
  EXPECT_EQ(only(slow).verdict, Verdict::slower);
  EXPECT_TRUE(slow.has_regression());
  EXPECT_LT(only(slow).p_value, 0.01);  // 5 vs 5 fully separated: exact p = 2/252
}

TEST(Compare, MissingAndNewPointsAreListedNotFailed) {
  Report o = make_report(), n = make_report();
  o.points.push_back(make_point("quest", 4096, 1e6));
  n.points.push_back(make_point("h2o", 4096, 1e6));
  const auto c = compare_reports(o, n, {});
  EXPECT_EQ(c.count(Verdict::missing), 1);
  EXPECT_EQ(c.count(Verdict::added), 1);
  EXPECT_FALSE(c.has_regression());
  for (const auto& p : c.points) {
    if (p.verdict == Verdict::missing) {
      EXPECT_EQ(p.axes.strategy, "quest");
    }
    if (p.verdict == Verdict::added) {
      EXPECT_EQ(p.axes.strategy, "h2o");
    }
  }
}

TEST(Compare, NothingInCommonIsAnErrorNotAPass) {
  // Every verdict MISSING/NEW judges nothing: a CI gate must not read that as "no regression".
  Report o = single(make_point("full-gpu", 8192, 1e6)),
         n = single(make_point("full-gpu", 4096, 1e6));
  try {
    compare_reports(o, n, {});
    ADD_FAILURE() << "disjoint reports compared";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage);
    EXPECT_NE(e.problem().find("nothing to compare"), std::string::npos) << e.problem();
  }
  Report empty = make_report();
  empty.points.clear();
  try {
    compare_reports(o, empty, {});
    ADD_FAILURE() << "an empty report compared";
  } catch (const Error& e) {
    EXPECT_NE(e.problem().find("the NEW report has no points"), std::string::npos) << e.problem();
  }
  // An interrupted NEW is compared on what it has, with a warning saying it is incomplete.
  Report part = o;
  part.interruption = {true, "SIGINT (Ctrl-C): stopped (after 1 of 2 points)", 130};
  const auto c = compare_reports(o, part, {});
  EXPECT_NE(c.warnings.back().find("NEW is an interrupted sweep"), std::string::npos);
}

TEST(Compare, PointThatStopsRunningIsARegression) {
  const auto c = compare_reports(
      single(make_point("full-gpu", 8192, 1e6)),
      single(make_failed_point("full-gpu", 8192, PointStatus::oom, "capacity")), {});
  EXPECT_EQ(only(c).verdict, Verdict::failed);
  EXPECT_TRUE(c.has_regression());
  const auto back =
      compare_reports(single(make_failed_point("full-gpu", 8192, PointStatus::oom, "capacity")),
                      single(make_point("full-gpu", 8192, 1e6)), {});
  EXPECT_EQ(only(back).verdict, Verdict::recovered);
  EXPECT_FALSE(back.has_regression());
}

TEST(Compare, AccuracyRegressionsAreFlaggedEvenWhenFaster) {
  Point o = pooled(1e6, 0.01, 1), n = pooled(0.7e6, 0.01, 2);
  n.accuracy.rel_l2 = 5e-2;
  auto c = compare_reports(single(o), single(n), {});
  EXPECT_EQ(only(c).verdict, Verdict::faster);
  ASSERT_EQ(only(c).accuracy_regressions.size(), 1u);
  EXPECT_NE(only(c).accuracy_regressions[0].find("rel_l2"), std::string::npos);
  EXPECT_TRUE(c.has_regression());

  n = pooled(1e6, 0.01, 2);
  n.accuracy.rel_l2 = 1.2e-3;  // within tolerance
  EXPECT_FALSE(compare_reports(single(o), single(n), {}).has_regression());

  o.accuracy.needle_success_rate = 1.0;
  n.accuracy.needle_success_rate = 0.75;
  c = compare_reports(single(o), single(n), {});
  ASSERT_EQ(only(c).accuracy_regressions.size(), 1u);
  EXPECT_NE(only(c).accuracy_regressions[0].find("needle"), std::string::npos);

  n.accuracy.needle_success_rate = 1.0;
  n.accuracy.mass_recall = 0.9;
  EXPECT_TRUE(compare_reports(single(o), single(n), {}).has_regression());

  n.accuracy.mass_recall = 1.0;
  n.accuracy.rel_l2 = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(compare_reports(single(o), single(n), {}).has_regression());
}

TEST(Compare, ContextDifferencesAreWarnings) {
  Report o = make_report(), n = make_report();
  n.context.host = "otherhost";
  n.context.accelerator.kind = AcceleratorKind::cuda;
  n.context.accelerator.name = "NVIDIA H200";
  const auto c = compare_reports(o, n, {});
  EXPECT_EQ(c.warnings.size(), 2u);
}

TEST(Compare, RejectsInconsistentOptionsAndAmbiguousReports) {
  CompareOptions opt;
  opt.min_effect = 0.1;
  opt.threshold = 0.05;
  EXPECT_THROW(compare_reports(make_report(), make_report(), opt), Error);
  Report dup = make_report();
  dup.points.push_back(dup.points[0]);
  EXPECT_THROW(compare_reports(dup, make_report(), {}), Error);
}

Report slowed_first(Report r, double factor) {
  std::vector<double> v = r.points[0].step.samples_ns;
  for (auto& x : v) x *= factor;
  static_cast<Timing&>(r.points[0].step) = Timing::from_samples(v);
  return r;
}

TEST(CompareRender, TableAndJsonShowTheRegression) {
  Report o = with_passes(make_report()), n = with_passes(make_report());
  n.points[0] = with_passes(make_point("cpu-only", 4096, 2.4e6, 0.01, 30, 9));  // 20% slower
  const auto c = compare_reports(o, n, {});
  const std::string table = compare_table_text(c);
  if (std::getenv("HB_SHOW")) std::cout << table;
  EXPECT_NE(table.find("SLOWER !"), std::string::npos) << table;
  EXPECT_NE(table.find("REGRESSION: 1 point"), std::string::npos) << table;
  EXPECT_NE(table.find("cpu-only 4k"), std::string::npos) << table;
  EXPECT_NE(table.find("model llama-3-8b"), std::string::npos) << table;

  const auto j = nlohmann::json::parse(compare_json_text(c, "old.json", "new.json"));
  EXPECT_EQ(j["schema"], "hybridbench.compare/1");
  EXPECT_EQ(j["regression"], true);
  EXPECT_EQ(j["counts"]["SLOWER"], 1);
  bool found = false;
  for (const auto& p : j["points"])
    if (p["verdict"] == "SLOWER") {
      found = true;
      EXPECT_EQ(p["regression"], true);
      EXPECT_NEAR(p["change"].get<double>(), 0.2, 0.02);
    }
  EXPECT_TRUE(found);

  const std::string ok = compare_table_text(compare_reports(o, o, {}));
  EXPECT_NE(ok.find("OK: no regression"), std::string::npos) << ok;

  // Single passes: the change is listed as INCONCLUSIVE, counted, and the exit stays 0.
  const auto single_pass = compare_reports(make_report(), slowed_first(make_report(), 1.2), {});
  const std::string t = compare_table_text(single_pass);
  EXPECT_NE(t.find("INCONCLUSIVE"), std::string::npos) << t;
  EXPECT_NE(t.find("OK: no regression"), std::string::npos) << t;
  const auto js = nlohmann::json::parse(compare_json_text(single_pass, "o", "n"));
  EXPECT_EQ(js["counts"]["INCONCLUSIVE"], 1);
  EXPECT_EQ(js["regression"], false);
  EXPECT_EQ(js["deciding_command"], single_pass.deciding_command);
  EXPECT_TRUE(js["options"]["drift_allowance"].is_null());  // none: every single pass
}

}  // namespace
}  // namespace hb::reports
