// The procurement ranking over abstract candidates (reports/procurement_rank.h): a winner only
// when the noise separates it, ties named, rounds paired where measured, blanks kept blank.
#include <gtest/gtest.h>

#include <cmath>

#include "reports/procurement_rank.h"

namespace hb::reports {
namespace {

using M = ProcurementMetric;

Candidate cand(const std::string& platform, const std::string& strategy, M m, double v,
               double noise = 0, std::vector<double> rounds = {},
               Provenance prov = Provenance::modeled) {
  Candidate c;
  c.platform = platform;
  c.strategy = strategy;
  c.provenance = prov;
  c.figure(m) = Figure{v, "", std::move(rounds), noise, false};
  return c;
}

TEST(ProcurementRank, AWinnerNeedsALeadBeyondTwiceTheNoise) {
  // 100 vs 90 with 1% noise each: |ln 1.111| = 0.105 > 2 x 1.41% -> decided.
  const std::vector<Candidate> cs = {cand("a", "s", M::tokens_per_s, 100, 0.01),
                                     cand("b", "s", M::tokens_per_s, 90, 0.01)};
  const Ranking r = rank_on(cs, M::tokens_per_s);
  ASSERT_EQ(r.leaders.size(), 1u);
  EXPECT_EQ(r.leaders[0]->platform, "a");
  ASSERT_TRUE(r.runner_up && r.lead);
  EXPECT_EQ(r.runner_up->platform, "b");
  EXPECT_NEAR(r.lead->ratio, 100.0 / 90, 1e-12);
  EXPECT_NEAR(r.lead->rel_noise, std::hypot(0.01, 0.01), 1e-12);
  EXPECT_TRUE(r.lead->decided());
}

TEST(ProcurementRank, LeadersWithinNoiseAreATieAndTheNextPlatformIsNamed) {
  // 100 vs 97 at 5% each: |ln 1.031| = 0.030 <= 2 x 7.1% -> a tie; 50 is clearly behind both.
  const std::vector<Candidate> cs = {cand("a", "s", M::tokens_per_s, 100, 0.05),
                                     cand("b", "t", M::tokens_per_s, 97, 0.05),
                                     cand("c", "s", M::tokens_per_s, 50, 0.05)};
  const Ranking r = rank_on(cs, M::tokens_per_s);
  ASSERT_EQ(r.leaders.size(), 2u);
  EXPECT_EQ(r.leaders[0]->platform, "a");
  EXPECT_EQ(r.leaders[1]->platform, "b");
  ASSERT_TRUE(r.runner_up);
  EXPECT_EQ(r.runner_up->platform, "c");
  EXPECT_NEAR(r.lead->ratio, 2.0, 1e-12);
}

TEST(ProcurementRank, MeasuredRoundsPairedSeparateWhatTheSpreadAloneCannot) {
  // Each round b is 2% behind a, while the rounds themselves move by +-4%: the unpaired rule
  // calls it a tie, the paired per-round ratios all exceed 1 (6 rounds: 96.9% coverage).
  const std::vector<double> ra = {100, 104, 96, 101, 99, 103};
  std::vector<double> rb;
  for (double v : ra) rb.push_back(v / 1.02);
  for (Provenance prov : {Provenance::measured, Provenance::modeled}) {
    const std::vector<Candidate> cs = {
        cand("a", "s", M::tokens_per_s, 100.5, 0.05, ra, prov),
        cand("b", "s", M::tokens_per_s, 100.5 / 1.02, 0.05, rb, prov)};
    const Ranking r = rank_on(cs, M::tokens_per_s);
    if (prov == Provenance::measured) {
      ASSERT_EQ(r.leaders.size(), 1u);
      ASSERT_TRUE(r.lead && r.lead->ci);
      EXPECT_NEAR(r.lead->ratio, 1.02, 1e-12);
      EXPECT_EQ(r.lead->ci->pairs, 6);
      EXPECT_GT(r.lead->ci->low, 1.0);
    } else {  // modeled figures have no rounds to pair: the spread decides, a tie
      EXPECT_EQ(r.leaders.size(), 2u);
    }
  }
}

TEST(ProcurementRank, LowerIsBetterForItlAndCost) {
  const std::vector<Candidate> cs = {cand("a", "s", M::itl, 30e6), cand("b", "s", M::itl, 20e6)};
  const Ranking r = rank_on(cs, M::itl);
  ASSERT_EQ(r.leaders.size(), 1u);
  EXPECT_EQ(r.leaders[0]->platform, "b");
  EXPECT_NEAR(r.lead->ratio, 1.5, 1e-12);
  EXPECT_FALSE(higher_is_better(M::cost));
  EXPECT_TRUE(higher_is_better(M::max_context));
}

TEST(ProcurementRank, PlatformsAreRankedByTheirBestStrategy) {
  // a's second strategy (95) is behind b's best (98) in the list, but the runner-up is the next
  // platform, not a's other strategy.
  const std::vector<Candidate> cs = {cand("a", "s", M::tokens_per_s, 200),
                                     cand("a", "t", M::tokens_per_s, 95),
                                     cand("b", "s", M::tokens_per_s, 98)};
  const Ranking r = rank_on(cs, M::tokens_per_s);
  ASSERT_EQ(r.leaders.size(), 1u);
  EXPECT_EQ(r.leaders[0]->strategy, "s");
  ASSERT_TRUE(r.runner_up);
  EXPECT_EQ(r.runner_up->platform, "b");
  const auto ranked = platforms_ranked(cs, "s", M::tokens_per_s);
  ASSERT_EQ(ranked.size(), 2u);
  EXPECT_EQ(ranked[0]->platform, "a");
  EXPECT_EQ(ranked[1]->platform, "b");
}

TEST(ProcurementRank, ExactFiguresTieOnlyWhenEqual) {
  std::vector<Candidate> cs = {cand("a", "s", M::max_context, 131072),
                               cand("b", "s", M::max_context, 131072)};
  EXPECT_EQ(rank_on(cs, M::max_context).leaders.size(), 2u);
  cs[1].figure(M::max_context).value = 131073;
  const Ranking r = rank_on(cs, M::max_context);
  ASSERT_EQ(r.leaders.size(), 1u);
  EXPECT_EQ(r.leaders[0]->platform, "b");
}

TEST(ProcurementRank, IneligibleCandidatesAreNeverCrownedAndBlanksKeepTheirReason) {
  std::vector<Candidate> cs = {cand("a", "s", M::tokens_per_s, 500),
                               cand("b", "s", M::tokens_per_s, 100)};
  cs[0].eligible = false;
  cs[0].why_not = "misses recall >= 0.9 (0.5)";
  const Ranking r = rank_on(cs, M::tokens_per_s);
  ASSERT_EQ(r.leaders.size(), 1u);
  EXPECT_EQ(r.leaders[0]->platform, "b");
  EXPECT_EQ(r.runner_up, nullptr);
  // No eligible candidate has a price: the column is blank with the first one's reason.
  cs[1].figure(M::cost) = Figure::blank("no price: give --price");
  const Ranking blank = rank_on(cs, M::cost);
  EXPECT_TRUE(blank.leaders.empty());
  EXPECT_EQ(blank.blank_reason, "b with s: no price: give --price");
}

}  // namespace
}  // namespace hb::reports
