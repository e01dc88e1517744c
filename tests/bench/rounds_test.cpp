#include "bench/rounds.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "bench/machine_control.h"
#include "bench/runner.h"
#include "tiny_spec.h"

namespace hb::bench {
namespace {

TEST(RoundPlan, SplitsTheTimedPositionsIntoNearlyEqualRuns) {
  const RoundPlan p(24, 2, 6);  // 22 timed positions: 4, 4, 4, 4, 3, 3
  EXPECT_EQ(p.rounds_per_pass(), 6);
  std::vector<int> sizes(6, 0);
  for (int s = 2; s < 24; ++s) ++sizes[static_cast<size_t>(p.round_of(s))];
  EXPECT_EQ(sizes, (std::vector<int>{4, 4, 4, 4, 3, 3}));
  int ends = 0;
  for (int s = 0; s < 24; ++s) ends += p.ends_round(s);
  EXPECT_EQ(ends, 6);
  EXPECT_FALSE(p.ends_round(1));  // warm-up steps end no round
  EXPECT_TRUE(p.ends_round(5));
  EXPECT_TRUE(p.ends_round(23));
  // Fewer positions than rounds: one step each; a single position: one round.
  EXPECT_EQ(RoundPlan(4, 1, 6).rounds_per_pass(), 3);
  const RoundPlan one(2, 1, 6);
  EXPECT_EQ(one.rounds_per_pass(), 1);
  EXPECT_TRUE(one.ends_round(1));
}

TEST(RoundOrder, IsAPermutationReproducibleFromTheSeedAndFreshEachRound) {
  EXPECT_TRUE(round_order(0, 1, 0).empty());
  EXPECT_EQ(round_order(1, 1, 0), std::vector<size_t>{0});
  std::set<std::vector<size_t>> seen;
  for (int64_t r = 0; r < 50; ++r) {
    auto o = round_order(12, 42, r);
    EXPECT_EQ(o, round_order(12, 42, r));  // reproducible
    auto sorted = o;
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < sorted.size(); ++i) EXPECT_EQ(sorted[i], i);  // each once
    seen.insert(o);
  }
  EXPECT_GT(seen.size(), 45u);  // fresh orders (12! of them)
  EXPECT_NE(round_order(12, 42, 0), round_order(12, 43, 0));
  EXPECT_NE(round_seed(42, "llama 4k"), round_seed(42, "llama 16k"));
  EXPECT_EQ(round_seed(42, "llama 4k"), round_seed(42, "llama 4k"));
}

// Every strategy of a group steps once per round, in that round's order, and the points record
// their places: per round the slots are a permutation of the strategies, the same next time.
TEST(RoundOrder, PointsRecordTheirPlaceInEveryRound) {
  auto spec = testing::tiny_spec({100});
  spec.strategies = {"full-gpu", "cpu-only", "hybridgen", "h2o"};
  const auto a = run_sweep(spec, RunEnvironment{});
  const auto b = run_sweep(spec, RunEnvironment{});
  ASSERT_EQ(a.points.size(), 4u);
  const size_t rounds = a.points[0].step.round_slots.size();
  ASSERT_EQ(rounds, 5u);
  for (size_t r = 0; r < rounds; ++r) {
    std::set<int> slots;
    for (const auto& p : a.points) {
      ASSERT_EQ(p.step.round_slots.size(), rounds) << p.axes.strategy;
      EXPECT_EQ(p.step.pass_sizes.size(), rounds);
      slots.insert(p.step.round_slots[r]);
    }
    EXPECT_EQ(slots, (std::set<int>{0, 1, 2, 3}));
  }
  for (size_t i = 0; i < a.points.size(); ++i)
    EXPECT_EQ(a.points[i].step.round_slots, b.points[i].step.round_slots);
  // The speedups pair the rounds and carry their interval.
  for (const auto& s : a.speedups) {
    EXPECT_TRUE(s.paired()) << s.strategy_a << " " << s.strategy_b;
    EXPECT_LE(s.ci_low, s.ratio);
    EXPECT_GE(s.ci_high, s.ratio);
  }
}

// The machine control reads in every round of the group, at a seeded place among the
// strategies, and every point of the group carries its time per round; the first pass's traffic
// (the same positions in every run) is the same in two runs, which compare relies on; HybridGen,
// whose selection follows its timings, records none.
TEST(MachineControl, IsMeasuredInTheSameRoundsAsEveryStrategy) {
  auto spec = testing::tiny_spec({100});
  spec.strategies = {"full-gpu", "cpu-only", "hybridgen", "h2o"};
  const auto a = run_sweep(spec, RunEnvironment{});
  const auto b = run_sweep(spec, RunEnvironment{});
  ASSERT_EQ(a.points.size(), 4u);
  const auto& control = a.points[0].step.control_ns;
  ASSERT_EQ(control.size(), a.points[0].step.pass_sizes.size());
  ASSERT_GE(control.size(), 2u);
  for (double ns : control) EXPECT_GT(ns, 0);
  for (size_t i = 0; i < a.points.size(); ++i) {
    EXPECT_EQ(a.points[i].step.control_ns, control) << a.points[i].axes.strategy;
    if (a.points[i].axes.strategy == "hybridgen") {
      EXPECT_FALSE(a.points[i].first_pass_traffic.has_value());
      continue;
    }
    ASSERT_TRUE(a.points[i].first_pass_traffic.has_value()) << a.points[i].axes.strategy;
    ASSERT_TRUE(b.points[i].first_pass_traffic.has_value());
    EXPECT_EQ(*a.points[i].first_pass_traffic, *b.points[i].first_pass_traffic)
        << a.points[i].axes.strategy;
  }
}

TEST(MachineControl, TakesEveryPlaceOfTheOrderAndAMedianPerRound) {
  std::set<size_t> places;
  for (int64_t r = 0; r < 200; ++r) {
    const size_t slot = MachineControl::slot_of(4, 42, r);
    EXPECT_LE(slot, 4u);
    EXPECT_EQ(slot, MachineControl::slot_of(4, 42, r));
    places.insert(slot);
  }
  EXPECT_EQ(places.size(), 5u);  // before each of the four strategies, and after the last
  MachineControl c(1, ThreadPool::global());
  EXPECT_EQ(c.bytes(), MachineControl::kMinBytes);
  EXPECT_TRUE(c.round_ns().empty());
  c.close_round();  // nothing read: no round
  c.measure();
  c.measure();
  c.close_round();
  c.measure();
  const auto rounds = c.round_ns();  // a closed round, then the open one
  ASSERT_EQ(rounds.size(), 2u);
  EXPECT_GT(rounds[0], 0);
  EXPECT_GT(rounds[1], 0);
}

}  // namespace
}  // namespace hb::bench
