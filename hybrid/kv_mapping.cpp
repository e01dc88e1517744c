// Mechanism 3, semantic-aware KV mapping: every decision that depends on the policy (the class
// is described in kv_mapping.h; HybridGen applies its moves to the cache in page_homes.cpp).
#include "hybrid/kv_mapping.h"

#include <algorithm>
#include <cmath>

namespace hb::hybrid {

KvMapping::KvMapping(const KvMappingOptions& options)
    : opt_(options),
      refresh_weight_(1.0 -
                      std::pow(1.0 - options.score_alpha, std::max(1, options.migrate_every))) {}

// ---- Plan time

std::string KvMapping::choose_tiers(const std::vector<HostTier>& tiers) {
  tiers_ = tiers;
  fast_ = 0;
  far_ = -1;
  for (size_t t = 1; t < tiers.size(); ++t) {
    const MemoryKind k = tiers[t].location.kind;
    if (k == MemoryKind::cxl || k == MemoryKind::far) {
      far_ = static_cast<int>(t);
      break;
    }
  }
  if (opt_.naive_tier < 0 || opt_.naive_tier >= static_cast<int>(tiers.size()))
    return "naive_tier " + std::to_string(opt_.naive_tier) + " does not exist (" +
           std::to_string(tiers.size()) + " host tiers)";
  return "";
}

std::string KvMapping::plan_capacity(int64_t host_pages, int64_t page_bytes, int64_t hot_slots) {
  hot_slots_ = hot_slots;
  // When memtier knows the free bytes, K that does not fit the fast tier spills to the far
  // tier (oldest first, as pages arrive).
  if (semantic()) {
    const int64_t free_fast = tiers_[fast_].free_bytes;
    if (free_fast >= 0 && far_ >= 0) fast_k_cap_ = free_fast / page_bytes;
    fast_v_cap_ =
        far_ >= 0 ? static_cast<int64_t>(opt_.fast_v_share * static_cast<double>(host_pages)) : 0;
  }
  newest_k_fast_ = semantic() && far_ >= 0 && fast_k_cap_ != INT64_MAX && opt_.scan_newest_only;
  auto short_of = [&](int t, int64_t bytes) {
    const int64_t f = tiers_[t].free_bytes;
    return f >= 0 && bytes > f;
  };
  const int64_t host_bytes = 2 * host_pages * page_bytes;
  int t = -1;
  if (opt_.policy == KvMappingPolicy::naive && short_of(opt_.naive_tier, host_bytes))
    t = opt_.naive_tier;
  if (semantic() && far_ < 0 && short_of(fast_, host_bytes)) t = fast_;
  if (semantic() && far_ >= 0 &&
      short_of(far_, host_pages * page_bytes +
                         std::max<int64_t>(0, host_pages - fast_k_cap_) * page_bytes))
    t = far_;
  if (t < 0) return "";
  return "host KV needs " + std::to_string(host_bytes >> 20) + " MiB; " +
         tiers_[t].location.to_string() + " has less free";
}

void KvMapping::describe(std::map<std::string, std::string>& par) const {
  par["kv_mapping"] = kKvMappingPolicies.name(opt_.policy);
  switch (opt_.policy) {
    case KvMappingPolicy::semantic:
      par["k_tier"] = tiers_[fast_].location.to_string();
      par["v_tier"] = far_ >= 0
                          ? tiers_[far_].location.to_string()
                          : tiers_[fast_].location.to_string() + " (no CXL/far tier: same as K)";
      par["migrate_every"] = std::to_string(opt_.migrate_every);
      par["fast_v_pages_per_head"] = std::to_string(fast_v_cap_);
      if (fast_k_cap_ != INT64_MAX) par["fast_k_pages_per_head"] = std::to_string(fast_k_cap_);
      break;
    case KvMappingPolicy::naive:
      par["kv_tier"] = tiers_[opt_.naive_tier].location.to_string();
      break;
    case KvMappingPolicy::interleave: {
      std::string t;
      for (const auto& h : tiers_) {
        if (!t.empty()) t += ",";
        t += h.location.to_string();
      }
      par["kv_tiers"] = t + " (pages round-robin)";
      break;
    }
  }
}

std::vector<KvMapping::Reservation> KvMapping::reservations(int64_t host_pages) const {
  switch (opt_.policy) {
    case KvMappingPolicy::naive:
      return {{false, opt_.naive_tier, host_pages}, {true, opt_.naive_tier, host_pages}};
    case KvMappingPolicy::interleave: {
      std::vector<Reservation> r;
      const auto n = static_cast<int64_t>(tiers_.size());
      for (int t = 0; t < static_cast<int>(n); ++t) {
        r.push_back({false, t, (host_pages + n - 1) / n});
        r.push_back({true, t, (host_pages + n - 1) / n});
      }
      return r;
    }
    case KvMappingPolicy::semantic:
      break;
  }
  const int64_t k_fast = std::min(host_pages, fast_k_cap_);
  std::vector<Reservation> r{{false, fast_, k_fast}};
  if (far_ < 0) {
    r.push_back({true, fast_, host_pages});
    return r;
  }
  r.push_back({true, far_, host_pages});
  if (k_fast < host_pages) r.push_back({false, far_, host_pages - k_fast});
  if (fast_v_cap_ > 0) r.push_back({true, fast_, fast_v_cap_});
  return r;
}

// ---- Pages arriving

std::pair<int, int> KvMapping::arrival_tiers(const HeadPages& head, int64_t page) const {
  switch (opt_.policy) {
    case KvMappingPolicy::naive:
      return {opt_.naive_tier, opt_.naive_tier};
    case KvMappingPolicy::interleave: {
      const int t = static_cast<int>(page % static_cast<int64_t>(tiers_.size()));
      return {t, t};
    }
    case KvMappingPolicy::semantic:
      break;
  }
  // K (scanned every step) on the fast tier while it has room, V (read only at the top-k rows)
  // on the far tier when there is one.
  const int kt = (far_ >= 0 && head.k_fast >= fast_k_cap_) ? far_ : fast_;
  return {kt, far_ >= 0 ? far_ : fast_};
}

void KvMapping::add_window_page(HeadPages& head) const { head.pages.push_back(PageInfo{}); }

std::pair<int, int> KvMapping::prompt_tiers(const HeadPages& head, int64_t page,
                                            int64_t first_window) const {
  auto tiers = arrival_tiers(head, page);
  // The newest host pages' K on the fast tier, the older ones' on the far tier.
  if (newest_k_fast_) tiers.first = page >= first_window - fast_k_cap_ ? fast_ : far_;
  return tiers;
}

void KvMapping::add_host_page(HeadPages& head, std::pair<int, int> tiers) const {
  PageInfo pi;
  pi.home = PageHome::host;
  pi.k_tier = static_cast<int8_t>(tiers.first);
  pi.v_tier = static_cast<int8_t>(tiers.second);
  head.pages.push_back(pi);
  count_fast(head, tiers.first, tiers.second, +1);
}

// ---- Moves (the page table here, the bytes through the mover)

void KvMapping::count_fast(HeadPages& head, int k_tier, int v_tier, int sign) const {
  if (k_tier == fast_) head.k_fast += sign;
  if (v_tier == fast_) head.v_fast += sign;
}

void KvMapping::move_to_host(HeadPages& head, int64_t page, int k_tier, int v_tier,
                             PageMover& mover) const {
  PageInfo& pi = head.pages[page];
  const PageInfo from = pi;
  mover.to_host(page, from, k_tier, v_tier);
  if (from.home == PageHome::host) count_fast(head, from.k_tier, from.v_tier, -1);
  if (from.home == PageHome::hot) head.hot--;
  pi.home = PageHome::host;
  pi.k_tier = static_cast<int8_t>(k_tier);
  pi.v_tier = static_cast<int8_t>(v_tier);
  count_fast(head, k_tier, v_tier, +1);
}

void KvMapping::move_to_accelerator(HeadPages& head, int64_t page, PageHome home,
                                    PageMover& mover) const {
  PageInfo& pi = head.pages[page];
  const PageInfo from = pi;
  mover.to_accelerator(page, from);
  if (from.home == PageHome::host) count_fast(head, from.k_tier, from.v_tier, -1);
  if (from.home == PageHome::hot) head.hot--;
  pi.home = home;
  pi.k_tier = pi.v_tier = -1;
  if (home == PageHome::hot) head.hot++;
}

// The oldest host page whose K is on the fast tier moves its K to the far tier.
void KvMapping::make_fast_k_room(HeadPages& head, int64_t first_window, PageMover& mover) const {
  if (head.k_fast < fast_k_cap_) return;
  for (int64_t i = 0; i < first_window; ++i) {
    const PageInfo& pi = head.pages[i];
    if (pi.home == PageHome::host && pi.k_tier == fast_) {
      move_to_host(head, i, far_, pi.v_tier, mover);
      return;
    }
  }
}

void KvMapping::evict(HeadPages& head, int64_t page, PageMover& mover) const {
  if (newest_k_fast_) make_fast_k_room(head, page, mover);
  const auto [kt, vt] = arrival_tiers(head, page);
  move_to_host(head, page, kt, vt, mover);
}

void KvMapping::return_to_window(HeadPages& head, int64_t page, PageMover& mover) const {
  move_to_accelerator(head, page, PageHome::window, mover);
}

// ---- Scores and the migration pass

void KvMapping::end_step(HeadPages& head) const {
  const float a = static_cast<float>(opt_.score_alpha);
  for (auto& pi : head.pages) {
    if (pi.home == PageHome::host) pi.score = (1 - a) * pi.score + a * static_cast<float>(pi.hits);
    pi.hits = 0;
  }
}

void KvMapping::refresh_promoted(PageInfo& page, int32_t hits) const {
  const double w = refresh_weight_;
  page.score = static_cast<float>((1 - w) * page.score + w * hits);
}

bool KvMapping::pass_due(int step) const {
  return semantic() && opt_.migrate_every > 0 && step > 0 && step % opt_.migrate_every == 0;
}

namespace {

// The hot page with the lowest score among pages [0, end), or -1.
int64_t coldest_hot(const HeadPages& head, int64_t end) {
  int64_t coldest = -1;
  for (int64_t i = 0; i < end; ++i)
    if (head.pages[i].home == PageHome::hot &&
        (coldest < 0 || head.pages[i].score < head.pages[coldest].score))
      coldest = i;
  return coldest;
}

}  // namespace

// Promoted pages whose refreshed score fell below the uniform share go back to the host.
void KvMapping::demote_cold(HeadPages& head, int64_t first_window, double cold_below,
                            PageMover& mover) const {
  for (int64_t i = 0; i < first_window; ++i)
    if (head.pages[i].home == PageHome::hot && head.pages[i].score < cold_below) {
      const auto [kt, vt] = arrival_tiers(head, i);
      move_to_host(head, i, kt, vt, mover);
    }
}

// Whole pages to the accelerator's hot slots, hottest first (hysteresis 1.5x against the
// coldest promoted page once the slots are full). `host` is sorted by score, descending.
void KvMapping::promote_hot(HeadPages& head, int64_t first_window, const std::vector<int64_t>& host,
                            double hot_at, PageMover& mover) const {
  for (int64_t c : host) {
    if (head.pages[c].score < hot_at) break;
    if (head.hot < hot_slots_) {
      move_to_accelerator(head, c, PageHome::hot, mover);
      continue;
    }
    const int64_t coldest = coldest_hot(head, first_window);
    if (coldest < 0 || head.pages[c].score <= 1.5 * head.pages[coldest].score) break;
    const auto [kt, vt] = arrival_tiers(head, coldest);
    move_to_host(head, coldest, kt, vt, mover);
    move_to_accelerator(head, c, PageHome::hot, mover);
  }
}

// V between host tiers: the hottest host pages' V on the fast tier, cold ones back to far.
void KvMapping::place_v(HeadPages& head, const std::vector<int64_t>& host, double hot_at,
                        double cold_below, PageMover& mover) const {
  int64_t want = 0;
  for (int64_t c : host) {
    PageInfo& pi = head.pages[c];
    if (pi.home != PageHome::host) continue;  // just promoted
    const bool hot = pi.score >= hot_at && want < fast_v_cap_;
    if (hot) ++want;
    if (hot && pi.v_tier != fast_ && head.v_fast < fast_v_cap_)
      move_to_host(head, c, pi.k_tier, fast_, mover);
    else if (!hot && pi.v_tier == fast_ && pi.score < cold_below)
      move_to_host(head, c, pi.k_tier, far_, mover);
  }
}

void KvMapping::migrate(HeadPages& head, int64_t first_window, double selected,
                        bool promoted_scores_fresh, PageMover& mover) const {
  if (!semantic()) return;  // naive and interleave never promote
  std::vector<int64_t> host;
  for (int64_t i = 0; i < first_window; ++i)
    if (head.pages[i].home == PageHome::host) host.push_back(i);
  if (host.empty()) return;
  // A page's expected hits per step if the top-k picked uniformly among the host pages.
  const double uniform = selected / static_cast<double>(host.size());
  const double hot_at = std::max(2.0 * uniform, 1e-6), cold_below = uniform;
  std::sort(host.begin(), host.end(), [&](int64_t a, int64_t b) {
    return head.pages[a].score != head.pages[b].score ? head.pages[a].score > head.pages[b].score
                                                      : a < b;
  });
  if (promoted_scores_fresh) demote_cold(head, first_window, cold_below, mover);
  if (hot_slots_ > 0) promote_hot(head, first_window, host, hot_at, mover);
  if (far_ >= 0 && fast_v_cap_ > 0) place_v(head, host, hot_at, cold_below, mover);
}

}  // namespace hb::hybrid
