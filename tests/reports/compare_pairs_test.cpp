// reports/compare_pairs.*: an A/B judged by its pass pairs, on crafted pass reports (no timing):
// the machine moving whole passes by tens of percent must fail nothing, one strategy 10% slower
// in every pair must, and one slow pair among five must not.
#include "reports/compare_pairs.h"

#include <algorithm>
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "fixtures.h"

namespace hb::reports {
namespace {

using testing::make_point;
using testing::make_report;

const char* const kStrategies[] = {"cpu-only", "quest", "h2o", "streamingllm"};

// One pass of `run --repetitions 1`: each strategy one round of 20 steps at its base time times
// the pass's machine speed, times `factor(strategy)`, times its own jitter in that pass (+-4%,
// drawn from the seed); the machine control in the same round moves with the machine.
Report pass_report(uint64_t seed, double machine, const std::function<double(int)>& factor,
                   int strategies = 4) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> jitter(0.96, 1.04), noise(0.97, 1.03);
  Report rep = make_report();
  rep.points.clear();
  for (int i = 0; i < strategies; ++i) {
    Point p = make_point(kStrategies[i], 4096, 1e6);
    const double at = 1e6 * (1 + i) * machine * factor(i) * jitter(rng);
    std::vector<double> v;
    for (int k = 0; k < 20; ++k) v.push_back(at * noise(rng));
    static_cast<Timing&>(p.step) = Timing::from_samples(v);
    p.step.pass_sizes = {20};
    p.step.control_ns = {4e5 * machine * noise(rng)};
    rep.points.push_back(std::move(p));
  }
  return rep;
}

// One side's passes pooled as `run` pools them: samples, rounds and controls end to end.
Report pooled(const std::vector<Report>& passes) {
  Report r = passes.at(0);
  for (size_t i = 1; i < passes.size(); ++i)
    for (size_t j = 0; j < r.points.size(); ++j) {
      StepTiming& s = r.points[j].step;
      const StepTiming& t = passes[i].points[j].step;
      std::vector<double> v = s.samples_ns;
      v.insert(v.end(), t.samples_ns.begin(), t.samples_ns.end());
      std::vector<int64_t> sizes = s.pass_sizes;
      std::vector<double> control = s.control_ns;
      static_cast<Timing&>(s) = Timing::from_samples(v);
      s.pass_sizes = sizes;
      s.pass_sizes.push_back(t.pass_sizes.at(0));
      s.control_ns = control;
      s.control_ns.push_back(t.control_ns.at(0));
    }
  return r;
}

struct Ab {
  std::vector<std::pair<Report, Report>> pairs;
  CompareResult pooled;  // compare_reports on the pooled sides, before the pairs
  CompareResult judged;  // with the pairs' verdicts
};

// `machine[k]` = {OLD's, NEW's} machine speed in pair k; `factor(pair, strategy)` NEW's change.
Ab run_ab(const std::vector<std::pair<double, double>>& machine,
          const std::function<double(int, int)>& factor, uint64_t seed = 1) {
  Ab ab;
  std::vector<Report> olds, news;
  for (size_t k = 0; k < machine.size(); ++k) {
    olds.push_back(pass_report(seed * 100 + 2 * k, machine[k].first, [](int) { return 1.0; }));
    news.push_back(pass_report(seed * 100 + 2 * k + 1, machine[k].second,
                               [&](int i) { return factor(static_cast<int>(k), i); }));
    ab.pairs.emplace_back(olds.back(), news.back());
  }
  const CompareOptions o;
  ab.pooled = compare_reports(pooled(olds), pooled(news), o);
  ab.judged = ab.pooled;
  apply_pass_pairs(judge_pass_pairs(ab.pairs, o), ab.judged);
  return ab;
}

const PointComparison& point(const CompareResult& r, const std::string& strategy) {
  auto it = std::find_if(r.points.begin(), r.points.end(),
                         [&](const PointComparison& c) { return c.axes.strategy == strategy; });
  EXPECT_NE(it, r.points.end()) << strategy;
  return *it;
}

// Whole passes moved -30% .. +30%, every strategy and the control together, pair by pair.
const std::vector<std::pair<double, double>> kMachine30 = {{1.0, 1.3},  {1.3, 0.7}, {0.8, 1.25},
                                                           {1.2, 0.75}, {0.7, 1.0}, {1.1, 1.3}};
const std::vector<std::pair<double, double>> kMachine20 = {{1.0, 1.2},  {1.2, 0.8}, {0.85, 1.2},
                                                           {1.15, 0.8}, {0.8, 1.0}, {1.0, 1.2}};

TEST(ComparePairs, AgreeingPairsNeeded) {
  EXPECT_EQ(pairs_agreeing_needed(1), 1);
  EXPECT_EQ(pairs_agreeing_needed(3), 2);
  EXPECT_EQ(pairs_agreeing_needed(5), 4);
  EXPECT_EQ(pairs_agreeing_needed(6), 4);
  EXPECT_EQ(pairs_agreeing_needed(10), 7);
}

// A/A: the machine moves whole passes by up to 30%. The pooled rounds read that as slowdowns of
// every strategy (the reason for pairs); by pairs every strategy is SAME and nothing fails.
TEST(ComparePairs, MachineMovesOfThirtyPercentFailNothing) {
  for (uint64_t seed : {1, 2, 3}) {
    const Ab ab = run_ab(
        kMachine30, [](int, int) { return 1.0; }, seed);
    EXPECT_EQ(ab.judged.outcome(), CompareResult::Outcome::ok) << seed;
    for (const char* s : kStrategies) {
      EXPECT_EQ(point(ab.judged, s).verdict, Verdict::same) << s << " seed " << seed;
      EXPECT_NEAR(point(ab.judged, s).judged_change, 0, 0.05) << s;
    }
    // The machine's move is said, with each pair's size.
    EXPECT_TRUE(
        std::any_of(ab.judged.warnings.begin(), ab.judged.warnings.end(), [](const std::string& w) {
          return w.find("moved") != std::string::npos &&
                 w.find("fails nothing") != std::string::npos;
        }));
  }
}

// Quest 10% slower in every pair, the machine moving whole passes by up to 20%: Quest alone is
// SLOWER, a regression (exit 3), its judged change about +10%.
TEST(ComparePairs, OneStrategyTenPercentSlowerInEveryPairIsARegression) {
  for (uint64_t seed : {1, 2, 3}) {
    const Ab ab = run_ab(
        kMachine20, [](int, int i) { return i == 1 ? 1.10 : 1.0; }, seed);
    EXPECT_EQ(ab.judged.outcome(), CompareResult::Outcome::regression) << seed;
    EXPECT_EQ(ab.judged.regressions, 1) << seed;
    const PointComparison& q = point(ab.judged, "quest");
    EXPECT_EQ(q.verdict, Verdict::slower) << seed;
    EXPECT_TRUE(q.slowdown_regression);
    EXPECT_NEAR(q.judged_change, 0.10, 0.07) << seed;  // +-4% jitter a pass a side
    EXPECT_NE(q.notes.at(0).find("6 pass pairs"), std::string::npos) << q.notes.at(0);
    for (const char* s : {"cpu-only", "h2o", "streamingllm"})
      EXPECT_FALSE(point(ab.judged, s).regression()) << s << " seed " << seed;
  }
}

// Quest 10% slower in one pair of five (a pass that met something): not a regression.
TEST(ComparePairs, OneSlowPairOfFiveIsNotARegression) {
  const std::vector<std::pair<double, double>> machine(kMachine20.begin(), kMachine20.begin() + 5);
  for (uint64_t seed : {1, 2, 3}) {
    const Ab ab = run_ab(
        machine, [](int k, int i) { return k == 2 && i == 1 ? 1.10 : 1.0; }, seed);
    EXPECT_EQ(ab.judged.outcome(), CompareResult::Outcome::ok) << seed;
    EXPECT_FALSE(point(ab.judged, "quest").regression()) << seed;
  }
}

// Two strategies (no group to judge against): each is judged against the machine control's
// move in each pair, so the machine's move still cancels and a real one still shows.
TEST(ComparePairs, SmallGroupIsJudgedAgainstTheControl) {
  std::vector<std::pair<Report, Report>> pairs;
  for (size_t k = 0; k < kMachine20.size(); ++k)
    pairs.emplace_back(
        pass_report(
            2 * k, kMachine20[k].first, [](int) { return 1.0; }, 2),
        pass_report(
            2 * k + 1, kMachine20[k].second, [](int i) { return i == 1 ? 1.15 : 1.0; }, 2));
  const PairedJudgement j = judge_pass_pairs(pairs, CompareOptions{});
  ASSERT_EQ(j.points.size(), 2u);
  for (const auto& p : j.points) {
    EXPECT_EQ(p.reference, "control") << p.key;
    const bool quest = p.key.find("quest") != std::string::npos;
    EXPECT_EQ(p.verdict, quest ? Verdict::slower : Verdict::same) << p.key;
  }
}

}  // namespace
}  // namespace hb::reports
