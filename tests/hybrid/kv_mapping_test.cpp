// KvMapping alone (mechanism 3, hybrid/kv_mapping.h): page tables driven by hand, a mover that
// only logs, and placements checked against values worked out in the comments. Inside HybridGen,
// with the bytes and their traffic: kv_mapping_in_hybridgen_test.cpp.
#include "hybrid/kv_mapping.h"

#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

namespace hb::hybrid {
namespace {

const MemoryLocation kDram{MemoryKind::local_dram, 0, false};
const MemoryLocation kRemote{MemoryKind::remote_dram, 1, false};
const MemoryLocation kCxl{MemoryKind::cxl, 2, true};
constexpr int64_t kPageBytes = 1 << 20;  // a page's K (or V) over every head and sequence

HostTier host_tier(MemoryLocation loc, int64_t free_bytes = -1) {
  return HostTier{loc, nullptr, free_bytes};
}

struct Move {
  int64_t page;
  bool to_host;
  PageHome from;
  int k_tier, v_tier;  // to_host only
  bool operator==(const Move&) const = default;
};

void PrintTo(const Move& m, std::ostream* os) {
  *os << "page " << m.page << (m.to_host ? " to host K@" : " to accelerator")
      << (m.to_host ? std::to_string(m.k_tier) + " V@" + std::to_string(m.v_tier) : "") << " from "
      << static_cast<int>(m.from);
}

class LogMover final : public PageMover {
 public:
  void to_host(int64_t page, const PageInfo& from, int k_tier, int v_tier) override {
    moves.push_back({page, true, from.home, k_tier, v_tier});
  }
  void to_accelerator(int64_t page, const PageInfo& from) override {
    moves.push_back({page, false, from.home, -1, -1});
  }
  std::vector<Move> moves;
};

// A mapping planned on `tiers` for at most `host_pages` host pages per head.
KvMapping planned(const std::vector<HostTier>& tiers, int64_t host_pages, int64_t hot_slots,
                  KvMappingOptions o = {}) {
  KvMapping m(o);
  EXPECT_EQ(m.choose_tiers(tiers), "");
  EXPECT_EQ(m.plan_capacity(host_pages, kPageBytes, hot_slots), "");
  return m;
}

HeadPages window_of(const KvMapping& m, int pages) {
  HeadPages head;
  for (int i = 0; i < pages; ++i) m.add_window_page(head);
  return head;
}

// Evicts pages [0, n) in FIFO order (the window's oldest first).
void evict_first(const KvMapping& m, HeadPages& head, int n, LogMover& mover) {
  for (int i = 0; i < n; ++i) m.evict(head, i, mover);
}

TEST(KvMapping, SemanticPutsKOnTheFastTierAndVOnTheFarTier) {
  // The far tier is the first CXL or far one after the fastest, not merely the second.
  const KvMapping m = planned({host_tier(kDram), host_tier(kRemote), host_tier(kCxl)}, 8, 0);
  EXPECT_EQ(m.fast_tier(), 0);
  EXPECT_EQ(m.far_tier(), 2);
  HeadPages head = window_of(m, 4);
  LogMover mover;
  evict_first(m, head, 3, mover);
  const std::vector<Move> want{{0, true, PageHome::window, 0, 2},
                               {1, true, PageHome::window, 0, 2},
                               {2, true, PageHome::window, 0, 2}};
  EXPECT_EQ(mover.moves, want);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(head.pages[i].home, PageHome::host);
    EXPECT_EQ(head.pages[i].k_tier, 0);
    EXPECT_EQ(head.pages[i].v_tier, 2);
  }
  EXPECT_EQ(head.pages[3].home, PageHome::window);
  EXPECT_EQ(head.k_fast, 3);
  EXPECT_EQ(head.v_fast, 0);
  std::map<std::string, std::string> par;
  m.describe(par);
  EXPECT_EQ(par.at("kv_mapping"), "semantic");
  EXPECT_EQ(par.at("k_tier"), "local-dram@0");
  EXPECT_EQ(par.at("v_tier"), "cxl@2(emulated)");
  EXPECT_EQ(par.at("fast_v_pages_per_head"), "2");   // 0.25 of 8 host pages
  EXPECT_FALSE(par.count("fast_k_pages_per_head"));  // free bytes unknown: no K limit
}

TEST(KvMapping, WithoutAFarTierVStaysWithK) {
  const KvMapping m = planned({host_tier(kDram), host_tier(kRemote)}, 8, 0);
  EXPECT_EQ(m.far_tier(), -1);
  EXPECT_EQ(m.fast_v_pages(), 0);  // nowhere faster to promote V to
  HeadPages head = window_of(m, 2);
  LogMover mover;
  m.evict(head, 0, mover);
  EXPECT_EQ(mover.moves, (std::vector<Move>{{0, true, PageHome::window, 0, 0}}));
  EXPECT_EQ(head.k_fast, 1);
  EXPECT_EQ(head.v_fast, 1);
  std::map<std::string, std::string> par;
  m.describe(par);
  EXPECT_EQ(par.at("v_tier"), "local-dram@0 (no CXL/far tier: same as K)");
}

// Capacity edges of the fast tier: full (room for no page's K), room for exactly one.
TEST(KvMapping, KSpillsToTheFarTierWhenTheFastTierIsFull) {
  const KvMapping full = planned({host_tier(kDram, 0), host_tier(kCxl)}, 4, 0);
  EXPECT_EQ(full.fast_k_pages(), 0);
  HeadPages head = window_of(full, 3);
  LogMover mover;
  evict_first(full, head, 2, mover);
  EXPECT_EQ(head.pages[0].k_tier, 1);
  EXPECT_EQ(head.pages[1].k_tier, 1);
  EXPECT_EQ(head.k_fast, 0);

  // One page's K fits (free bytes just under two pages): the first evicted stays fast.
  const KvMapping one = planned({host_tier(kDram, 2 * kPageBytes - 1), host_tier(kCxl)}, 4, 0);
  EXPECT_EQ(one.fast_k_pages(), 1);
  HeadPages h1 = window_of(one, 4);
  evict_first(one, h1, 3, mover);
  EXPECT_EQ(h1.pages[0].k_tier, 0);
  EXPECT_EQ(h1.pages[1].k_tier, 1);
  EXPECT_EQ(h1.pages[2].k_tier, 1);
  EXPECT_EQ(h1.k_fast, 1);
  std::map<std::string, std::string> par;
  one.describe(par);
  EXPECT_EQ(par.at("fast_k_pages_per_head"), "1");
  // Reserved up front: K of 1 page fast, V of 4 far, K of the other 3 far, V of 1 (0.25 * 4)
  // promotable to the fast tier.
  const auto r = one.reservations(4);
  ASSERT_EQ(r.size(), 4u);
  EXPECT_TRUE(!r[0].v && r[0].tier == 0 && r[0].pages == 1);
  EXPECT_TRUE(r[1].v && r[1].tier == 1 && r[1].pages == 4);
  EXPECT_TRUE(!r[2].v && r[2].tier == 1 && r[2].pages == 3);
  EXPECT_TRUE(r[3].v && r[3].tier == 0 && r[3].pages == 1);
}

// With cpu_k_cap the CPU scans the newest host pages, so the fast tier keeps the newest K.
TEST(KvMapping, WithTheNewestKFastTheOldestFastKSpillsFirst) {
  KvMappingOptions o;
  o.scan_newest_only = true;
  const KvMapping m = planned({host_tier(kDram, 2 * kPageBytes), host_tier(kCxl)}, 8, 0, o);
  ASSERT_TRUE(m.newest_k_fast());
  HeadPages head = window_of(m, 4);
  LogMover mover;
  evict_first(m, head, 2, mover);  // both K fit the fast tier
  mover.moves.clear();
  m.evict(head, 2, mover);  // page 0's K moves to the far tier first
  const std::vector<Move> want{{0, true, PageHome::host, 1, 1}, {2, true, PageHome::window, 0, 1}};
  EXPECT_EQ(mover.moves, want);
  EXPECT_EQ(head.pages[0].k_tier, 1);
  EXPECT_EQ(head.pages[1].k_tier, 0);
  EXPECT_EQ(head.pages[2].k_tier, 0);
  EXPECT_EQ(head.k_fast, 2);
  // At load, of the 5 host pages the newest 2 get the fast tier.
  const HeadPages empty;
  for (int64_t i = 0; i < 5; ++i)
    EXPECT_EQ(m.prompt_tiers(empty, i, 5), std::make_pair(i >= 3 ? 0 : 1, 1)) << i;
}

TEST(KvMapping, ShortHostTiersAreRefusedNamingTheTier) {
  // 4 host pages of 1 MiB K + 1 MiB V = 8 MiB; with no K limit the far tier holds all V (4 MiB).
  KvMapping m;
  ASSERT_EQ(m.choose_tiers({host_tier(kDram), host_tier(kCxl, 4 * kPageBytes - 1)}), "");
  EXPECT_EQ(m.plan_capacity(4, kPageBytes, 0),
            "host KV needs 8 MiB; cxl@2(emulated) has less free");
  ASSERT_EQ(m.choose_tiers({host_tier(kDram), host_tier(kCxl, 4 * kPageBytes)}), "");
  EXPECT_EQ(m.plan_capacity(4, kPageBytes, 0), "");
  // No far tier: the fast one holds K and V.
  ASSERT_EQ(m.choose_tiers({host_tier(kDram, 8 * kPageBytes - 1)}), "");
  EXPECT_EQ(m.plan_capacity(4, kPageBytes, 0), "host KV needs 8 MiB; local-dram@0 has less free");
  // naive: its one tier holds everything; a tier that does not exist is refused up front.
  KvMappingOptions naive;
  naive.policy = KvMappingPolicy::naive;
  naive.naive_tier = 1;
  KvMapping n(naive);
  ASSERT_EQ(n.choose_tiers({host_tier(kDram), host_tier(kCxl, 8 * kPageBytes - 1)}), "");
  EXPECT_EQ(n.plan_capacity(4, kPageBytes, 0),
            "host KV needs 8 MiB; cxl@2(emulated) has less free");
  EXPECT_EQ(n.choose_tiers({host_tier(kDram)}), "naive_tier 1 does not exist (1 host tiers)");
}

TEST(KvMapping, NaiveAndInterleaveNeverPromote) {
  KvMappingOptions naive;
  naive.policy = KvMappingPolicy::naive;
  naive.naive_tier = 1;
  const std::vector<HostTier> tiers{host_tier(kDram), host_tier(kRemote), host_tier(kCxl)};
  const KvMapping n = planned(tiers, 6, 2, naive);
  KvMappingOptions inter;
  inter.policy = KvMappingPolicy::interleave;
  const KvMapping il = planned(tiers, 6, 2, inter);
  HeadPages hn = window_of(n, 6), hi = window_of(il, 6);
  LogMover mover;
  evict_first(n, hn, 5, mover);
  evict_first(il, hi, 5, mover);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(hn.pages[i].k_tier, 1);
    EXPECT_EQ(hn.pages[i].v_tier, 1);
    EXPECT_EQ(hi.pages[i].k_tier, i % 3);  // round-robin over the three tiers
    EXPECT_EQ(hi.pages[i].v_tier, i % 3);
  }
  // Page 0 selected far above the others: no pass is due, and a pass would not move it.
  hn.pages[0].score = hi.pages[0].score = 100;
  mover.moves.clear();
  EXPECT_FALSE(n.pass_due(8));
  n.migrate(hn, 5, 8, true, mover);
  il.migrate(hi, 5, 8, true, mover);
  EXPECT_TRUE(mover.moves.empty());
  EXPECT_EQ(n.reservations(6).size(), 2u);   // K and V, both on the naive tier
  EXPECT_EQ(il.reservations(6).size(), 6u);  // K and V on each tier, 2 pages each
  EXPECT_EQ(il.reservations(6)[4].pages, 2);
}

// Scores: alpha 0.5, so after n steps of h hits a page scores h * (1 - 0.5^n), exactly.
KvMappingOptions halves() {
  KvMappingOptions o;
  o.score_alpha = 0.5;
  o.migrate_every = 1;  // a promoted page's refresh weight: 1 - 0.5^1 = 0.5
  return o;
}

// 8 pages, the first 6 evicted to the host; per step the top-k selects 24 rows (say 4 query
// heads x 6): 16 in page 2, 6 in page 4, 2 in page 0.
HeadPages selected_three_steps(const KvMapping& m, LogMover& mover) {
  HeadPages head = window_of(m, 8);
  evict_first(m, head, 6, mover);
  for (int s = 0; s < 3; ++s) {
    head.pages[2].hits = 16;
    head.pages[4].hits = 6;
    head.pages[0].hits = 2;
    m.end_step(head);
  }
  return head;
}

TEST(KvMapping, PagesTheTopKSelectsTwiceTheUniformShareArePromoted) {
  const KvMapping m = planned({host_tier(kDram), host_tier(kCxl)}, 6, 2, halves());
  LogMover mover;
  HeadPages head = selected_three_steps(m, mover);
  EXPECT_EQ(head.pages[2].score, 14.0f);  // 16 * 7/8
  EXPECT_EQ(head.pages[4].score, 5.25f);
  EXPECT_EQ(head.pages[0].score, 1.75f);
  EXPECT_EQ(head.pages[4].hits, 0);
  // Uniform share: 24 rows over 6 pages = 4 a page; promoted from 8 (twice that). Only page 2
  // qualifies, though two slots are free; its V is not moved on the host (it left the host).
  mover.moves.clear();
  m.migrate(head, 6, 24, true, mover);
  EXPECT_EQ(mover.moves, (std::vector<Move>{{2, false, PageHome::host, -1, -1}}));
  EXPECT_EQ(head.pages[2].home, PageHome::hot);
  EXPECT_EQ(head.hot, 1);
  EXPECT_EQ(head.k_fast, 5);
  // A promoted page's score no longer folds in host hits.
  head.pages[2].hits = 16;
  m.end_step(head);
  EXPECT_EQ(head.pages[2].score, 14.0f);
}

TEST(KvMapping, AFullHotTierSwapsOnlyForAPageHalfAgainAsHot) {
  const KvMapping m = planned({host_tier(kDram), host_tier(kCxl)}, 6, 1, halves());
  LogMover mover;
  HeadPages head = selected_three_steps(m, mover);
  m.migrate(head, 6, 24, true, mover);  // page 2 takes the only slot (score 14)
  ASSERT_EQ(head.pages[2].home, PageHome::hot);
  // Page 4 now gets 16 hits a step: 5.25 -> 10.625 -> 13.3125 -> 14.65625, hot (twice the
  // uniform 24 / 5 host pages = 4.8) but not above 1.5 x 14 = 21: the full slot stays with page
  // 2, and page 4's V comes to the fast tier instead (its share: 0.25 x 6 = 1 page).
  for (int s = 0; s < 3; ++s) {
    head.pages[4].hits = 16;
    m.end_step(head);
  }
  EXPECT_EQ(head.pages[4].score, 14.65625f);
  mover.moves.clear();
  m.migrate(head, 6, 24, true, mover);
  EXPECT_EQ(mover.moves, (std::vector<Move>{{4, true, PageHome::host, 0, 0}}));
  EXPECT_EQ(head.v_fast, 1);
  // The accelerator re-scores page 2 with no hits: 14 -> 7, still above the uniform share
  // (4.8), so not demoted; 14.65625 > 1.5 x 7 swaps the two.
  m.refresh_promoted(head.pages[2], 0);
  EXPECT_EQ(head.pages[2].score, 7.0f);
  mover.moves.clear();
  m.migrate(head, 6, 24, true, mover);
  const std::vector<Move> want{{2, true, PageHome::hot, 0, 1}, {4, false, PageHome::host, -1, -1}};
  EXPECT_EQ(mover.moves, want);
  EXPECT_EQ(head.pages[2].home, PageHome::host);
  EXPECT_EQ(head.pages[4].home, PageHome::hot);
  EXPECT_EQ(head.hot, 1);
  EXPECT_EQ(head.v_fast, 0);  // page 4's V left the host with it
}

TEST(KvMapping, PromotedPagesGoneColdAreDemotedOnlyOnFreshScores) {
  const KvMapping m = planned({host_tier(kDram), host_tier(kCxl)}, 6, 2, halves());
  LogMover mover;
  HeadPages head = selected_three_steps(m, mover);
  m.migrate(head, 6, 24, true, mover);
  for (int i = 0; i < 2; ++i) m.refresh_promoted(head.pages[2], 0);  // 14 -> 3.5, under 4.8
  EXPECT_EQ(head.pages[2].score, 3.5f);
  mover.moves.clear();
  m.migrate(head, 6, 24, false, mover);  // scores not refreshed this pass: kept
  EXPECT_TRUE(mover.moves.empty());
  m.migrate(head, 6, 24, true, mover);
  EXPECT_EQ(mover.moves, (std::vector<Move>{{2, true, PageHome::hot, 0, 1}}));
  EXPECT_EQ(head.hot, 0);
  EXPECT_EQ(head.k_fast, 6);
}

TEST(KvMapping, HotHostPagesVMovesToTheFastTierWithinItsShare) {
  // No hot slots: promotion on the host only. 4 host pages, V share 0.25: one V page fast.
  const KvMapping m = planned({host_tier(kDram), host_tier(kCxl)}, 4, 0, halves());
  ASSERT_EQ(m.fast_v_pages(), 1);
  HeadPages head = window_of(m, 5);
  LogMover mover;
  evict_first(m, head, 4, mover);
  head.pages[1].score = 10;  // uniform: 8 rows / 4 pages = 2; hot from 4
  head.pages[3].score = 6;
  mover.moves.clear();
  m.migrate(head, 4, 8, true, mover);
  EXPECT_EQ(mover.moves, (std::vector<Move>{{1, true, PageHome::host, 0, 0}}));
  EXPECT_EQ(head.pages[1].v_tier, 0);
  EXPECT_EQ(head.pages[3].v_tier, 1);  // hot too, but the share is spent
  EXPECT_EQ(head.v_fast, 1);
  // Page 1 goes cold (under the uniform 2): its V returns to the far tier. Page 3, hotter, was
  // looked at first, while the share was still taken: its V comes up at the next pass.
  head.pages[1].score = 1;
  mover.moves.clear();
  m.migrate(head, 4, 8, true, mover);
  EXPECT_EQ(mover.moves, (std::vector<Move>{{1, true, PageHome::host, 0, 1}}));
  EXPECT_EQ(head.v_fast, 0);
  mover.moves.clear();
  m.migrate(head, 4, 8, true, mover);
  EXPECT_EQ(mover.moves, (std::vector<Move>{{3, true, PageHome::host, 0, 0}}));
  EXPECT_EQ(head.v_fast, 1);
}

// Capacity edges: no pages at all, a single page, no hot slots.
TEST(KvMapping, NothingMovesWithNoPagesOneLonePageOrNoSlots) {
  const KvMapping zero = planned({host_tier(kDram), host_tier(kCxl)}, 0, 2, halves());
  EXPECT_EQ(zero.fast_v_pages(), 0);
  for (const auto& r : zero.reservations(0)) EXPECT_EQ(r.pages, 0);
  HeadPages none;
  LogMover mover;
  zero.end_step(none);
  zero.migrate(none, 0, 24, true, mover);
  EXPECT_TRUE(mover.moves.empty());

  // One host page that every row selects: 8 hits a step, its score tends to 8, which is the
  // uniform share itself (8 rows / 1 page), never twice it: a lone page is not "hot".
  const KvMapping one = planned({host_tier(kDram), host_tier(kCxl)}, 1, 1, halves());
  HeadPages head = window_of(one, 2);
  one.evict(head, 0, mover);
  for (int s = 0; s < 20; ++s) {
    head.pages[0].hits = 8;
    one.end_step(head);
  }
  mover.moves.clear();
  one.migrate(head, 1, 8, true, mover);
  EXPECT_TRUE(mover.moves.empty());
  EXPECT_EQ(head.pages[0].home, PageHome::host);

  // No hot slots: a page selected far above the rest stays on the host.
  const KvMapping no_slots = planned({host_tier(kDram)}, 6, 0, halves());
  HeadPages h6 = window_of(no_slots, 7);
  evict_first(no_slots, h6, 6, mover);
  h6.pages[3].score = 100;
  mover.moves.clear();
  no_slots.migrate(h6, 6, 24, true, mover);
  EXPECT_TRUE(mover.moves.empty());
}

TEST(KvMapping, PagesReturnToTheWindowFromTheHostOrAHotSlot) {
  const KvMapping m = planned({host_tier(kDram), host_tier(kCxl)}, 6, 2, halves());
  LogMover mover;
  HeadPages head = selected_three_steps(m, mover);
  m.migrate(head, 6, 24, true, mover);  // page 2 promoted
  mover.moves.clear();
  m.return_to_window(head, 5, mover);
  m.return_to_window(head, 2, mover);
  const std::vector<Move> want{{5, false, PageHome::host, -1, -1},
                               {2, false, PageHome::hot, -1, -1}};
  EXPECT_EQ(mover.moves, want);
  EXPECT_EQ(head.pages[5].home, PageHome::window);
  EXPECT_EQ(head.pages[2].home, PageHome::window);
  EXPECT_EQ(head.hot, 0);
  EXPECT_EQ(head.k_fast, 4);
}

TEST(KvMapping, PassesRunEveryMigrateEverySteps) {
  KvMappingOptions o;
  o.migrate_every = 4;
  const KvMapping m(o);
  EXPECT_FALSE(m.pass_due(0));
  EXPECT_FALSE(m.pass_due(3));
  EXPECT_TRUE(m.pass_due(4));
  EXPECT_TRUE(m.pass_due(8));
  o.migrate_every = 0;
  EXPECT_FALSE(KvMapping(o).pass_due(4));
}

}  // namespace
}  // namespace hb::hybrid
