#pragma once
// HybridGen's semantic-aware KV mapping (mechanism 3; hybrid/README.md, "3. Semantic-aware KV
// mapping"): which memory holds each page of a KV head's cache. The newest pages are the recent
// window on the accelerator (mechanism 1 moves its boundary); an older page lives on the host,
// its K on one host tier and its V on another, or is promoted back to the accelerator ("hot")
// while the top-k keeps selecting it. KvMapping makes every decision that depends on the
// policy and keeps each head's page table; a PageMover moves the bytes (HybridGen: the paged
// cache and its traffic, page_homes.cpp). So the class is tested on its own, against
// hand-checked placements (tests/hybrid/kv_mapping_test.cpp), as the scheduler is.
// The policies (option `kv_mapping=`, old spelling `mapping=`):
//   semantic   - K (scanned every step) on the fastest host tier, V (read only at the top-k
//                rows) on the CXL/far tier; pages the top-k selects well above average are
//                promoted (whole pages to the accelerator's hot slots, V to the fast tier) and
//                cold ones demoted (the paper's);
//   naive      - every host page on one tier (`naive_tier`), no promotion;
//   interleave - pages round-robin over the host tiers, as a system without semantic mapping
//                would place them (numactl --interleave); no promotion (`hybridgen-naive`).
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/strategy.h"
#include "core/vocabulary.h"

namespace hb::hybrid {

enum class KvMappingPolicy { semantic, naive, interleave };
inline constexpr Vocabulary<KvMappingPolicy, 3> kKvMappingPolicies{
    {"semantic", "naive", "interleave"}};

// Where a page of one KV head lives.
enum class PageHome : uint8_t { host, window, hot };

struct PageInfo {
  PageHome home = PageHome::window;
  int8_t k_tier = -1, v_tier = -1;  // host tier indices while the page is on the host
  float score = 0;   // EMA of top-k hits per step (promoted: refreshed each migration pass)
  int32_t hits = 0;  // top-k hits of the current step (the step counts them)
};

// One KV head's page table: page i holds tokens [i * page_tokens, (i + 1) * page_tokens).
struct HeadPages {
  std::vector<PageInfo> pages;
  int64_t hot = 0;                 // pages promoted to the accelerator
  int64_t k_fast = 0, v_fast = 0;  // host pages with K / V on the fast tier
};

// The mapping's options (HybridGenConfig's, hybrid/README.md "Options").
struct KvMappingOptions {
  KvMappingPolicy policy = KvMappingPolicy::semantic;
  int naive_tier = 0;          // host tier index for policy naive
  int migrate_every = 8;       // decode steps between promotion/demotion passes (0: none)
  double fast_v_share = 0.25;  // host pages whose V may be promoted to the fast tier
  double score_alpha = 0.25;   // EMA weight of a step's top-k hits in a page's score
  // The CPU scans only the newest host pages (cpu_k_cap): when the fast tier cannot hold all
  // host K, it holds the newest (arrival order would spill exactly the pages that are scanned).
  bool scan_newest_only = false;
};

// Moves a page's bytes when the mapping re-homes it; the page table is the mapping's.
class PageMover {
 public:
  virtual ~PageMover() = default;
  // Page `page` goes to the host, K on tier `k_tier`, V on `v_tier`; `from` is where it was
  // (on the accelerator, or on other host tiers).
  virtual void to_host(int64_t page, const PageInfo& from, int k_tier, int v_tier) = 0;
  // Page `page` goes to the accelerator (the window or a hot slot); `from` as above.
  virtual void to_accelerator(int64_t page, const PageInfo& from) = 0;
};

class KvMapping {
 public:
  KvMapping() = default;
  explicit KvMapping(const KvMappingOptions& options);

  // ---- Plan time, in this order.
  // The host tiers, fastest first: K's fast tier is the first, the far tier the first CXL or
  // far one after it. Returns "" or why the options cannot use them.
  std::string choose_tiers(const std::vector<HostTier>& tiers);
  // Per KV head at most `host_pages` pages on the host, a page's K (or V) `page_bytes` over
  // every head and sequence, `hot_slots` accelerator pages for promoted ones. Sizes what the
  // fast tier holds (from the tiers' free bytes); returns "" or why the host tiers are short.
  std::string plan_capacity(int64_t host_pages, int64_t page_bytes, int64_t hot_slots);
  // The parameters the report shows (`kv_mapping`, the tiers, the fast-tier capacities).
  void describe(std::map<std::string, std::string>& par) const;
  // Blocks to reserve up front when at most `host_pages` pages per head are on the host: per
  // (K or V, tier), in pages per head.
  struct Reservation {
    bool v = false;
    int tier = 0;
    int64_t pages = 0;
  };
  std::vector<Reservation> reservations(int64_t host_pages) const;

  // ---- Pages arriving.
  void add_window_page(HeadPages& head) const;  // a new page: on the accelerator
  // Prompt load with pages [0, first_window) on the host: the tiers of host page `page`
  // (every head's alike), and the page appended there.
  std::pair<int, int> prompt_tiers(const HeadPages& head, int64_t page, int64_t first_window) const;
  void add_host_page(HeadPages& head, std::pair<int, int> tiers) const;

  // ---- The recent window's boundary (mechanism 1 decides where it is).
  // Page `page`, the window's oldest, goes to the host: to the policy's tiers, after moving
  // the oldest fast K to the far tier when the newest K must stay fast and the tier is full.
  void evict(HeadPages& head, int64_t page, PageMover& mover) const;
  // Page `page` (on the host or promoted) joins the window again.
  void return_to_window(HeadPages& head, int64_t page, PageMover& mover) const;

  // ---- Scores and the migration pass (policy semantic).
  // After a step: host pages' hits fold into their scores (EMA, score_alpha); hits reset.
  void end_step(HeadPages& head) const;
  // A promoted page is attended densely, so it gets no hits: before a pass the accelerator
  // re-scores it; its score takes one EMA step per decode step since the last pass with
  // `hits` each.
  void refresh_promoted(PageInfo& page, int32_t hits) const;
  bool pass_due(int step) const;  // a pass runs before decode step `step`
  // One pass over the older pages [0, first_window): demote promoted pages that went cold
  // (when `promoted_scores_fresh`), promote host pages selected at least twice the uniform
  // share (`selected` rows a step over the head's query heads), V of hot host pages to the
  // fast tier and of cold ones back to the far tier.
  void migrate(HeadPages& head, int64_t first_window, double selected, bool promoted_scores_fresh,
               PageMover& mover) const;

  // ---- Inspection.
  const KvMappingOptions& options() const { return opt_; }
  int fast_tier() const { return fast_; }
  int far_tier() const { return far_; }                  // -1: no CXL/far tier
  int64_t fast_k_pages() const { return fast_k_cap_; }   // INT64_MAX: unlimited
  int64_t fast_v_pages() const { return fast_v_cap_; }   // V pages promotable to fast
  int64_t hot_slots() const { return hot_slots_; }       // per head, on the accelerator
  bool newest_k_fast() const { return newest_k_fast_; }  // see scan_newest_only
  std::pair<int, int> arrival_tiers(const HeadPages& head, int64_t page) const;  // (K, V)

 private:
  bool semantic() const { return opt_.policy == KvMappingPolicy::semantic; }
  void count_fast(HeadPages& head, int k_tier, int v_tier, int sign) const;
  void move_to_host(HeadPages& head, int64_t page, int k_tier, int v_tier, PageMover& mover) const;
  void move_to_accelerator(HeadPages& head, int64_t page, PageHome home, PageMover& mover) const;
  void make_fast_k_room(HeadPages& head, int64_t first_window, PageMover& mover) const;
  void demote_cold(HeadPages& head, int64_t first_window, double cold_below,
                   PageMover& mover) const;
  void promote_hot(HeadPages& head, int64_t first_window, const std::vector<int64_t>& host,
                   double hot_at, PageMover& mover) const;
  void place_v(HeadPages& head, const std::vector<int64_t>& host, double hot_at, double cold_below,
               PageMover& mover) const;

  KvMappingOptions opt_;
  std::vector<HostTier> tiers_;
  int fast_ = 0, far_ = -1;
  int64_t fast_k_cap_ = INT64_MAX;  // per head: host pages whose K fits the fast tier
  int64_t fast_v_cap_ = 0;          // per head: V pages promotable to the fast tier
  int64_t hot_slots_ = 0;
  bool newest_k_fast_ = false;
  double refresh_weight_ = 0;  // a promoted page's EMA weight over migrate_every steps
};

}  // namespace hb::hybrid
