#include "reports/compare.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <random>

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
using testing::scaled;
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
  // The same 20% with one round a side: significant on the step blocks, but two runs of one
  // binary differed by that much here (within --drift-allowance 25%), so it is neither a
  // regression nor "same".
  const auto c = compare_reports(single(make_point("x", 4096, 1e6, 0.02, 30, 1)),
                                 single(make_point("x", 4096, 1.2e6, 0.02, 30, 2)), {});
  const auto& p = only(c);
  EXPECT_EQ(p.verdict, Verdict::inconclusive);
  EXPECT_TRUE(p.single_pass);
  EXPECT_LT(p.p_value, 0.01);  // 6 vs 6 block medians fully separated: exact p = 2/924
  EXPECT_EQ(p.old_medians, kRoundBlocks);
  EXPECT_EQ(p.notes.back(),
            "one round: within --drift-allowance 25.0%; drift between runs can "
            "explain it");
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
  // Beyond the drift allowance a clear one-round shift is judged: a doubling fails.
  const auto twice = compare_reports(single(make_point("x", 4096, 1e6, 0.02, 30, 1)),
                                     single(make_point("x", 4096, 2e6, 0.02, 30, 2)), {});
  EXPECT_EQ(only(twice).verdict, Verdict::slower);
  EXPECT_EQ(only(twice).notes.back(), "one round, beyond --drift-allowance 25.0%");
  EXPECT_TRUE(twice.has_regression());
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
  CompareOptions fine;  // --min-effect 2%: below the default, above this test's 0.5% noise
  fine.min_effect = 0.02;
  const auto c =
      compare_reports(single(pooled(1e6, 0.005, 1)), single(pooled(1.03e6, 0.005, 2)), fine);
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

TEST(Compare, NoChangeUnderHighNoiseIsSame) {
  // --min-effect says what is too small to matter; noise cannot make +0.0% NOISY.
  const auto c = compare_reports(single(make_point("x", 4096, 1e6, 0.3, 8, 1)),
                                 single(make_point("x", 4096, 1e6, 0.3, 8, 1)), {});
  EXPECT_EQ(only(c).verdict, Verdict::same);
  EXPECT_TRUE(only(c).too_noisy);
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
  EXPECT_EQ(only(c).notes.back(), "one round, beyond --drift-allowance 50.0%");
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
  EXPECT_EQ(only(same).notes.back(), "round medians 5 vs 5");
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

// The verdict rules on their own, one row per rule (default options: min effect 2%, alpha 0.01,
// max noise 10%, drift allowance 25%).
TEST(CompareVerdict, RulesTable) {
  struct Row {
    const char* why;
    TimingEvidence e;
    Verdict expected;
  };
  const Row rows[] = {
      {"no change, however noisy", {0.0, 0.9, 1.0, false, true}, Verdict::same},
      {"under min effect, significant", {0.019, 0.01, 0.001, true, true}, Verdict::same},
      {"under min effect, untestable", {-0.01, 0.5, 1.0, false, false}, Verdict::same},
      {"rounds, +30% significant", {0.3, 0.02, 0.002, true, true}, Verdict::slower},
      {"rounds, -30% significant", {-0.3, 0.02, 0.002, true, true}, Verdict::faster},
      {"rounds: noise gate off", {0.3, 0.4, 0.002, true, true}, Verdict::slower},
      {"rounds, not significant", {0.3, 0.02, 0.05, true, true}, Verdict::noisy},
      {"p exactly alpha is not significant", {0.3, 0.02, 0.01, true, true}, Verdict::noisy},
      {"one round, +30% beyond drift", {0.3, 0.02, 0.002, false, true}, Verdict::slower},
      {"one round, +20% within drift", {0.2, 0.02, 0.002, false, true}, Verdict::inconclusive},
      {"one round, noisy, within 3x noise", {0.3, 0.12, 0.002, false, true}, Verdict::noisy},
      {"one round, noisy, beyond 3x noise", {0.4, 0.12, 0.002, false, true}, Verdict::slower},
      {"one round, too few steps", {0.5, 0.02, 1.0, false, false}, Verdict::noisy},
  };
  for (const auto& r : rows)
    EXPECT_EQ(verdict_name(timing_verdict(r.e, {})), std::string(verdict_name(r.expected)))
        << r.why;
}

// Whole reports (5 timed points + full-gpu oom at 16k): each case's counts and outcome.
TEST(CompareVerdict, PlantedAndIdenticalReports) {
  const Report one = make_report(), rounds = with_passes(make_report(), 6);
  Report noisy = make_report();  // 15% noise a point: the loaded VM's single runs
  for (auto& p : noisy.points)
    if (p.timed()) p = make_point(p.axes.strategy, p.axes.seq_len, p.step.summary.median, 0.15);
  struct Row {
    const char* why;
    Report old_report, new_report;
    int slower, same, unjudged;
    CompareResult::Outcome outcome;
  };
  using O = CompareResult::Outcome;
  const Row rows[] = {
      {"rounds, every sample x1.3", rounds, scaled(rounds, 1.3), 5, 0, 0, O::regression},
      {"one quiet round, x1.3", one, scaled(one, 1.3), 5, 0, 0, O::regression},
      {"identical rounds", rounds, rounds, 0, 5, 0, O::ok},
      {"identical single rounds", one, one, 0, 5, 0, O::ok},
      {"identical noisy single rounds", noisy, noisy, 0, 5, 0, O::ok},
      {"one round x1.2: within drift", one, scaled(one, 1.2), 0, 0, 5, O::ok},
      {"one noisy round x1.3: not beyond 3x noise", noisy, scaled(noisy, 1.3), 0, 0, 5, O::ok},
  };
  for (const auto& r : rows) {
    const auto c = compare_reports(r.old_report, r.new_report, {});
    EXPECT_EQ(c.count(Verdict::slower), r.slower) << r.why;
    EXPECT_EQ(c.count(Verdict::same), r.same) << r.why;
    EXPECT_EQ(c.unjudged(), r.unjudged) << r.why;
    EXPECT_EQ(c.timed_pairs(), 5) << r.why;
    EXPECT_EQ(c.outcome(), r.outcome) << r.why;
  }
}

TEST(CompareVerdict, PlantedSlowdownIsCaughtThroughRoundToRoundDrift) {
  // 6 rounds whose levels wander +-5% (each met its own load): x1.3 still moves every round.
  const std::vector<double> levels = {0.95, 1.02, 1.0, 1.05, 0.97, 1.01};
  Report o = single(pooled_point(1e6, levels, 1));
  const auto c = compare_reports(o, scaled(o, 1.3), {});
  EXPECT_EQ(only(c).verdict, Verdict::slower);
  EXPECT_EQ(only(c).old_medians, 6);
  EXPECT_EQ(c.outcome(), CompareResult::Outcome::regression);
}

TEST(CompareVerdict, NoiseLevelChangesAreNeverSlower) {
  // Fresh samples from the same distribution, or shifted under --min-effect, at 2-10% noise:
  // rounds and one round alike may say SAME, NOISY or INCONCLUSIVE, never SLOWER.
  for (uint64_t seed = 2; seed < 10; ++seed)
    for (double shift : {1.0, 1.01, 0.99})
      for (double noise : {0.02, 0.1})
        for (bool rounds : {false, true}) {
          Point o = make_point("x", 4096, 1e6, noise, 36, 1),
                n = make_point("x", 4096, 1e6 * shift, noise, 36, seed);
          if (rounds) o = with_passes(o, 6), n = with_passes(n, 6);
          const auto c = compare_reports(single(o), single(n), {});
          EXPECT_NE(only(c).verdict, Verdict::slower)
              << "seed " << seed << " shift " << shift << " noise " << noise << " rounds " << rounds
              << " change " << only(c).change << " p " << only(c).p_value;
          EXPECT_FALSE(c.has_regression());
        }
  // +3% (beyond a --min-effect of 2%) in rounds whose levels wander +-5%: the round medians
  // overlap, so it cannot be told from the drift.
  CompareOptions fine;
  fine.min_effect = 0.02;
  const auto c =
      compare_reports(single(pooled_point(1e6, {0.95, 1.02, 1.0, 1.05, 0.97, 1.01}, 1)),
                      single(pooled_point(1.03e6, {1.04, 0.96, 1.0, 1.03, 0.98, 1.06}, 2)), fine);
  EXPECT_GE(only(c).change, 0.02);
  EXPECT_EQ(only(c).verdict, Verdict::noisy);
}

// One INCONCLUSIVE (one round, +20%) and one NOISY (5 steps: too few to test) of 5 timed points.
CompareResult two_unjudged(CompareOptions options = {}) {
  Report o = make_report(), n = make_report();
  n.points[0] = make_point("cpu-only", 4096, 2.4e6);  // 20% slower
  o.points[1] = make_point("full-gpu", 4096, 1e6, 0.3, 5, 1);
  n.points[1] = make_point("full-gpu", 4096, 1.25e6, 0.3, 5, 2);
  return compare_reports(o, n, options);
}

TEST(CompareVerdict, UnjudgedPointsAreCountedAndFailOnlyWhenAsked) {
  const auto c = two_unjudged();
  EXPECT_EQ(c.count(Verdict::inconclusive), 1);
  EXPECT_EQ(c.count(Verdict::noisy), 1);
  EXPECT_EQ(c.unjudged(), 2);
  EXPECT_EQ(c.outcome(), CompareResult::Outcome::ok);
  EXPECT_EQ(compare_verdict_line(c),
            "OK: no regression (2 of 5 timed points not judged: 1 NOISY, 1 INCONCLUSIVE)");
  CompareOptions strict;
  strict.fail_unjudged = true;
  const auto f = two_unjudged(strict);
  EXPECT_EQ(f.outcome(), CompareResult::Outcome::unjudged);
  EXPECT_EQ(compare_verdict_line(f),
            "UNJUDGED: 2 of 5 timed points not judged: 1 NOISY, 1 INCONCLUSIVE (--fail-unjudged)");
  EXPECT_EQ(nlohmann::json::parse(compare_json_text(f, "o", "n"))["outcome"], "unjudged");
  // A regression wins over unjudged points, which its line still counts.
  strict.drift_allowance = 0;  // the +20% is now judged: SLOWER beyond the threshold
  const auto r = two_unjudged(strict);
  EXPECT_EQ(r.outcome(), CompareResult::Outcome::regression);
  EXPECT_EQ(compare_verdict_line(r),
            "REGRESSION: 1 point(s) marked '!' (1 of 5 timed points not judged: 1 NOISY)");
  // Nothing unjudged: the line says so by saying nothing more.
  EXPECT_EQ(compare_verdict_line(compare_reports(make_report(), make_report(), strict)),
            "OK: no regression");
}

TEST(CompareVerdict, DifferentStrategySetsAreNamedInOneLine) {
  Report o = make_report(), n = make_report();
  o.points.push_back(make_point("quest", 4096, 1e6));
  o.points.push_back(make_point("h2o", 4096, 1e6));
  n.points.push_back(make_point("streamingllm", 4096, 1e6));
  auto has = [](const CompareResult& c, const std::string& line) {
    return std::find(c.warnings.begin(), c.warnings.end(), line) != c.warnings.end();
  };
  const auto c = compare_reports(o, n, {});
  EXPECT_TRUE(has(c, "strategies only in OLD: h2o, quest; only in NEW: streamingllm"))
      << ::testing::PrintToString(c.warnings);
  EXPECT_TRUE(has(compare_reports(make_report(), n, {}), "strategies only in NEW: streamingllm"));
  EXPECT_TRUE(has(compare_reports(o, make_report(), {}), "strategies only in OLD: h2o, quest"));
  EXPECT_TRUE(compare_reports(make_report(), make_report(), {}).warnings.empty());
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
  EXPECT_EQ(js["options"]["drift_allowance"], 0.25);
}

}  // namespace
}  // namespace hb::reports

namespace hb::reports {
namespace {

// One group (one model, length, batch) of six strategies, each timed in 6 rounds of 8 steps at 2%
// noise; `factor(i)` scales strategy i's NEW samples.
Report group_of_six(uint64_t seed, const std::function<double(int)>& factor) {
  Report r = make_report();
  r.points.clear();
  for (int i = 0; i < 6; ++i) {
    std::string name = "s";  // appended: GCC 12's -Wrestrict misfires on "s" + to_string
    name += std::to_string(i);
    Point p =
        with_passes(make_point(name, 32768, 1e6 * (1 + i) * factor(i), 0.02, 48, seed + i), 6);
    r.points.push_back(std::move(p));
  }
  return r;
}

TEST(CompareGroupDrift, AWholeGroupMovingTogetherWithinTheAllowanceIsMachineDrift) {
  const Report old_r = group_of_six(1, [](int) { return 1.0; });
  // Every strategy 10% slower: what back-to-back identical runs showed (groups moved -14%..+9%).
  const auto c = compare_reports(old_r, group_of_six(100, [](int) { return 1.1; }), {});
  EXPECT_EQ(c.count(Verdict::same), 6);
  EXPECT_EQ(c.outcome(), CompareResult::Outcome::ok);
  ASSERT_EQ(c.group_shifts.size(), 1u);
  EXPECT_NEAR(c.group_shifts[0].shift, 0.1, 0.01);
  EXPECT_TRUE(c.group_shifts[0].applied);
  for (const auto& p : c.points) {
    EXPECT_TRUE(p.against_group);
    EXPECT_NEAR(p.change, 0.1, 0.02);  // the raw change stays in the table
    EXPECT_NEAR(p.judged_change, 0.0, 0.02);
  }
  const bool said = std::any_of(c.warnings.begin(), c.warnings.end(), [](const std::string& w) {
    return w.find("llama-3-8b 32k batch 1 moved +10.") == 0 &&
           w.find("within --group-drift 20.0%") != std::string::npos;
  });
  EXPECT_TRUE(said);
}

TEST(CompareGroupDrift, APlantedSlowdownBeyondTheAllowanceIsStillARegression) {
  const Report old_r = group_of_six(1, [](int) { return 1.0; });
  const auto c = compare_reports(old_r, group_of_six(100, [](int) { return 1.3; }), {});
  EXPECT_EQ(c.count(Verdict::slower), 6);
  EXPECT_EQ(c.outcome(), CompareResult::Outcome::regression);
  EXPECT_FALSE(c.group_shifts.at(0).applied);
  for (const auto& p : c.points) EXPECT_FALSE(p.against_group);
}

TEST(CompareGroupDrift, OneStrategysSlowdownStandsOutOfItsGroup) {
  const Report old_r = group_of_six(1, [](int) { return 1.0; });
  // Alone, and on top of a 10% drift of the whole group: the median move ignores the one.
  for (double drift : {1.0, 1.1}) {
    const auto c = compare_reports(
        old_r, group_of_six(100, [&](int i) { return drift * (i == 2 ? 1.3 : 1.0); }), {});
    EXPECT_EQ(c.count(Verdict::slower), 1) << drift;
    EXPECT_EQ(c.count(Verdict::same), 5) << drift;
    EXPECT_EQ(c.points.at(2).verdict, Verdict::slower) << drift;
    EXPECT_NEAR(c.points.at(2).judged_change, 0.3, 0.03) << drift;
    EXPECT_TRUE(c.points.at(2).slowdown_regression) << drift;
  }
}

TEST(CompareGroupDrift, OffOrTooFewStrategiesJudgesEachPointAsItIs) {
  const Report old_r = group_of_six(1, [](int) { return 1.0; });
  const Report drifted = group_of_six(100, [](int) { return 1.1; });
  CompareOptions off;
  off.group_drift = 0;
  const auto c = compare_reports(old_r, drifted, off);
  EXPECT_EQ(c.count(Verdict::slower), 6);
  EXPECT_FALSE(c.group_shifts.at(0).applied);
  // Two strategies: one's real change would be half the "common" move.
  Report o2 = old_r, n2 = drifted;
  o2.points.resize(kMinGroupForShift - 1);
  n2.points.resize(kMinGroupForShift - 1);
  const auto two = compare_reports(o2, n2, {});
  EXPECT_TRUE(two.group_shifts.empty());
  EXPECT_EQ(two.count(Verdict::slower), 2);
  CompareOptions bad;
  bad.group_drift = 1.0;
  EXPECT_THROW(compare_reports(old_r, drifted, bad), Error);
}

}  // namespace
}  // namespace hb::reports

namespace hb::reports {
namespace {

// One group of six strategies timed in 6 rounds of 8 steps, the machine's speed drifting from
// round to round (up to +-10%, drawn from the seed) and the machine control measured in the same
// rounds (StepTiming::control_ns), as run records them. `machine` scales every sample and the
// control (the machine moved), `control` the control alone, `factor(i)` strategy i's samples.
Report controlled_group(uint64_t seed, double machine, double control,
                        const std::function<double(int)>& factor) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> drift(0.9, 1.1), noise(0.98, 1.02);
  std::vector<double> speed(6), control_ns(6);
  for (auto& s : speed) s = drift(rng);
  for (int r = 0; r < 6; ++r) control_ns[r] = 4e5 * speed[r] * machine * control * noise(rng);
  Report rep = make_report();
  rep.points.clear();
  for (int i = 0; i < 6; ++i) {
    std::string name = "s";
    name += std::to_string(i);
    Point p = make_point(name, 32768, 1e6, 0.02, 48, seed + i);
    std::vector<double> v;
    for (int r = 0; r < 6; ++r)
      for (int k = 0; k < 8; ++k)
        v.push_back(1e6 * (1 + i) * speed[r] * machine * factor(i) * noise(rng));
    static_cast<Timing&>(p.step) = Timing::from_samples(v);
    p.step.pass_sizes.assign(6, 8);
    p.step.control_ns = control_ns;
    Traffic t;
    t.read(Processor::cpu, MemoryKind::local_dram, int64_t{1} << 30);
    t.h2d_bytes = int64_t{1} << 20;
    p.first_pass_traffic = t;
    rep.points.push_back(std::move(p));
  }
  return rep;
}

const auto kSame = [](int) { return 1.0; };

bool warned(const CompareResult& c, const std::string& text) {
  return std::any_of(c.warnings.begin(), c.warnings.end(),
                     [&](const std::string& w) { return w.find(text) != std::string::npos; });
}

TEST(CompareControl, RerunsOfOneBinaryPassWhateverTheRoundsDrift) {
  for (uint64_t seed = 10; seed < 20; ++seed) {
    const auto c = compare_reports(controlled_group(1, 1.0, 1.0, kSame),
                                   controlled_group(seed * 7, 1.0, 1.0, kSame), {});
    EXPECT_EQ(c.outcome(), CompareResult::Outcome::ok) << seed;
    for (const auto& p : c.points) EXPECT_TRUE(p.against_control) << seed;
    ASSERT_EQ(c.machine_moves.size(), 1u) << seed;
    EXPECT_TRUE(c.machine_moves[0].with_group) << seed;  // the group moved with its control
  }
}

TEST(CompareControl, AMachineMoveIsSaidWithItsSizeAndFailsNothing) {
  // A copy with every sample x1.15 and the control x1.15: the machine slowed, no strategy did.
  const auto c = compare_reports(controlled_group(1, 1.0, 1.0, kSame),
                                 controlled_group(1, 1.15, 1.0, kSame), {});
  EXPECT_EQ(c.outcome(), CompareResult::Outcome::ok);
  EXPECT_EQ(c.count(Verdict::same), 6);
  ASSERT_EQ(c.machine_moves.size(), 1u);
  EXPECT_NEAR(c.machine_moves[0].shift, 0.15, 0.04);
  EXPECT_EQ(c.machine_moves[0].points, 6);
  EXPECT_TRUE(warned(c, "the machine moved +1")) << ::testing::PrintToString(c.warnings);
  for (const auto& p : c.points) {
    EXPECT_NEAR(p.change, 0.15, 0.04);  // the raw change stays in the table
    EXPECT_NEAR(p.judged_change, 0.0, 0.03);
    EXPECT_NEAR(p.control_shift, 0.15, 0.04);
  }
}

TEST(CompareControl, OneStrategyThatMovedAgainstTheMachineIsARegression) {
  const auto c =
      compare_reports(controlled_group(1, 1.0, 1.0, kSame),
                      controlled_group(2, 1.0, 1.0, [](int i) { return i == 3 ? 1.1 : 1.0; }), {});
  EXPECT_EQ(c.outcome(), CompareResult::Outcome::regression);
  EXPECT_EQ(c.points.at(3).verdict, Verdict::slower);
  EXPECT_NEAR(c.points.at(3).judged_change, 0.1, 0.03);
  EXPECT_EQ(c.count(Verdict::slower), 1);
}

TEST(CompareControl, AMoveWithinTheSpreadBetweenIdenticalRunsIsInconclusive) {
  const auto c =
      compare_reports(controlled_group(1, 1.0, 1.0, kSame),
                      controlled_group(2, 1.0, 1.0, [](int i) { return i == 3 ? 1.06 : 1.0; }), {});
  EXPECT_EQ(c.outcome(), CompareResult::Outcome::ok);
  EXPECT_EQ(c.points.at(3).verdict, Verdict::inconclusive);
}

TEST(CompareControl, EveryStrategySlowerOnAnUnchangedMachineIsARegression) {
  // A copy with all samples x1.15, the control unchanged: what --group-drift 20% used to excuse.
  const auto c = compare_reports(controlled_group(1, 1.0, 1.0, kSame),
                                 controlled_group(1, 1.15, 1 / 1.15, kSame), {});
  EXPECT_EQ(c.outcome(), CompareResult::Outcome::regression);
  EXPECT_EQ(c.count(Verdict::slower), 6);
  EXPECT_NEAR(c.machine_moves.at(0).shift, 0.0, 0.04);
  EXPECT_FALSE(c.machine_moves.at(0).with_group);  // 15% beyond the machine: the strategies moved
  EXPECT_TRUE(warned(c, "beyond the machine, more than --control-allowance 10.0%"))
      << ::testing::PrintToString(c.warnings);
}

TEST(CompareControl, DeterministicFiguresAreComparedExactly) {
  Report old_r = controlled_group(1, 1.0, 1.0, kSame);
  Report more_bytes = old_r;  // the same timings: only the behaviour differs
  auto& t = *more_bytes.points.at(4).first_pass_traffic;
  t.bytes_read[int(Processor::cpu)][int(MemoryKind::local_dram)] += (int64_t{1} << 30) / 20;
  const auto c = compare_reports(old_r, more_bytes, {});
  EXPECT_EQ(c.outcome(), CompareResult::Outcome::regression);
  EXPECT_EQ(c.regressions, 1);
  ASSERT_EQ(c.points.at(4).behaviour_changes.size(), 1u);
  EXPECT_NE(c.points.at(4).behaviour_changes[0].find("cpu reads of local-dram 1.00 GiB"),
            std::string::npos)
      << c.points.at(4).behaviour_changes[0];
  EXPECT_NE(compare_table_text(c).find("behaviour changed"), std::string::npos);

  Report other_tokens = old_r;  // attended tokens over the same scored steps
  for (Report* r : {&old_r, &other_tokens})
    for (auto& p : r->points) p.attended_tokens = AttendedTokens{1000, 900, 1100};
  other_tokens.points.at(1).attended_tokens->max = 1101;
  const auto d = compare_reports(old_r, other_tokens, {});
  EXPECT_EQ(d.regressions, 1);
  EXPECT_FALSE(d.points.at(1).behaviour_changes.empty());
  EXPECT_EQ(compare_reports(old_r, old_r, {}).outcome(), CompareResult::Outcome::ok);
}

}  // namespace
}  // namespace hb::reports
