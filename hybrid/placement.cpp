// Mechanism 3, semantic-aware KV mapping, and the page homes it works on (hybrid/README.md,
// "3. Semantic-aware KV mapping"). Every decision that depends on the PlacementPolicy is here.
#include <algorithm>
#include <cmath>

#include "hybrid/hybridgen_impl.h"
#include "kernels/nvtx.h"

namespace hb::hybrid {

PageArena& HybridGen::Impl::k_arena(int t) {
  if (!k_arenas[t])
    k_arenas[t] = std::make_unique<PageArena>(platform.host_tiers[t].allocator, block, 64);
  return *k_arenas[t];
}

PageArena& HybridGen::Impl::v_arena(int t) {
  if (!v_arenas[t])
    v_arenas[t] = std::make_unique<PageArena>(platform.host_tiers[t].allocator, block, 64);
  return *v_arenas[t];
}

std::pair<int, int> HybridGen::Impl::host_tiers_for(const HeadState& hs, int64_t page) const {
  switch (cfg().mapping) {
    case PlacementPolicy::naive:
      return {naive_tier, naive_tier};
    case PlacementPolicy::interleave: {
      const int t = static_cast<int>(page % static_cast<int64_t>(platform.host_tiers.size()));
      return {t, t};
    }
    case PlacementPolicy::semantic:
      break;
  }
  // K (scanned every step) on the fast tier while it has room, V (read only at the top-k rows)
  // on the far tier when there is one.
  const int kt = (far >= 0 && hs.k_fast >= fast_k_cap) ? far : fast;
  return {kt, far >= 0 ? far : fast};
}

namespace {
void count_fast(HeadState& hs, int fast, int kt, int vt, int sign) {
  if (kt == fast) hs.k_fast += sign;
  if (vt == fast) hs.v_fast += sign;
}
}  // namespace

void HybridGen::Impl::to_host(SeqState& s, int h, int64_t i, int kt, int vt) {
  HB_NVTX_RANGE("hb.hybrid.migrate_to_host");
  HeadState& hs = s.heads[h];
  PageInfo& pi = hs.pages[i];
  const bool from_acc = pi.home != PageHome::host;
  if (!from_acc) count_fast(hs, fast, pi.k_tier, pi.v_tier, -1);
  const int old_k = pi.k_tier, old_v = pi.v_tier;
  const size_t moved = s.cache->migrate_page(h, i, &k_arena(kt), &v_arena(vt));
  const auto bl = static_cast<int64_t>(block);
  if (from_acc) {
    // The copy engine reads accelerator memory and writes the host tiers.
    mig.d2h_bytes += static_cast<int64_t>(moved);
    mig.read(Processor::accelerator, MemoryKind::accelerator, static_cast<int64_t>(moved));
    mig.write(Processor::accelerator, tier_kind(kt), bl);
    mig.write(Processor::accelerator, tier_kind(vt), bl);
    if (pi.home == PageHome::hot) hs.hot--;
  } else {
    if (old_k != kt) mig.read(Processor::cpu, tier_kind(old_k), bl);
    if (old_k != kt) mig.write(Processor::cpu, tier_kind(kt), bl);
    if (old_v != vt) mig.read(Processor::cpu, tier_kind(old_v), bl);
    if (old_v != vt) mig.write(Processor::cpu, tier_kind(vt), bl);
  }
  if (moved) ++migrated_pages_step;
  pi.home = PageHome::host;
  pi.k_tier = static_cast<int8_t>(kt);
  pi.v_tier = static_cast<int8_t>(vt);
  count_fast(hs, fast, kt, vt, +1);
  dirty = true;
}

void HybridGen::Impl::to_acc(SeqState& s, int h, int64_t i, PageHome home) {
  HB_NVTX_RANGE("hb.hybrid.migrate_to_accelerator");
  HeadState& hs = s.heads[h];
  PageInfo& pi = hs.pages[i];
  if (pi.home == PageHome::host) {
    count_fast(hs, fast, pi.k_tier, pi.v_tier, -1);
    const size_t moved = s.cache->migrate_page(h, i, acc_arena.get(), acc_arena.get());
    // The copy engine reads the host tiers (baselines/README's convention).
    mig.h2d_bytes += static_cast<int64_t>(moved);
    mig.read(Processor::accelerator, tier_kind(pi.k_tier), static_cast<int64_t>(block));
    mig.read(Processor::accelerator, tier_kind(pi.v_tier), static_cast<int64_t>(block));
    mig.write(Processor::accelerator, MemoryKind::accelerator, static_cast<int64_t>(moved));
    ++migrated_pages_step;
  } else if (pi.home == PageHome::hot) {
    hs.hot--;
  }
  pi.home = home;
  pi.k_tier = pi.v_tier = -1;
  if (home == PageHome::hot) hs.hot++;
  dirty = true;
}

// With cpu_k_cap the CPU scans only the newest host pages, so when the fast tier cannot hold
// all host K it should hold the newest (arrival order would leave the oldest there and spill
// exactly the pages that are scanned).
bool HybridGen::Impl::newest_k_fast() const {
  return semantic && far >= 0 && fast_k_cap != INT64_MAX && cfg().scheduler.cpu_k_cap > 0;
}

// The oldest host page whose K is on the fast tier moves its K to the far tier.
void HybridGen::Impl::make_fast_k_room(SeqState& s, int h) {
  HeadState& hs = s.heads[h];
  if (hs.k_fast < fast_k_cap) return;
  for (int64_t i = 0; i < first_window; ++i) {
    const PageInfo& pi = hs.pages[i];
    if (pi.home == PageHome::host && pi.k_tier == fast) {
      to_host(s, h, i, far, pi.v_tier);
      return;
    }
  }
}

// Moves the recent window's first page so the window holds `window_pages` pages once the caches
// have `pages_after` pages (FIFO eviction, and the scheduler's boundary moves).
void HybridGen::Impl::apply_window(int64_t pages_after, int64_t window_pages) {
  const int64_t target = std::max<int64_t>(0, pages_after - window_pages);
  while (first_window < target) {
    for (auto& s : seqs)
      for (int h = 0; h < Hkv; ++h) {
        if (newest_k_fast()) make_fast_k_room(s, h);
        const auto [kt, vt] = host_tiers_for(s.heads[h], first_window);
        to_host(s, h, first_window, kt, vt);
      }
    ++first_window;
  }
  while (first_window > target) {
    --first_window;
    for (auto& s : seqs)
      for (int h = 0; h < Hkv; ++h) to_acc(s, h, first_window, PageHome::window);
  }
}

namespace {

// One head's two page tables: host pages for the CPU, hot then window pages for the
// accelerator (only a view's last page may be partial, so the window comes last).
void rebuild_head(SeqState& s, int h, int P, size_t n_tiers) {
  HeadState& hs = s.heads[h];
  hs.cpu_refs.clear();
  hs.cpu_ids.clear();
  hs.acc_refs.clear();
  hs.acc_ids.clear();
  hs.cpu_k_pages_by_tier.assign(n_tiers, 0);
  hs.cpu_v_pages_by_tier.assign(n_tiers, 0);
  const int64_t n = s.cache->num_pages(h);
  for (int64_t i = 0; i < n; ++i) {
    const PageInfo& pi = hs.pages[i];
    if (pi.home == PageHome::host) {
      hs.cpu_refs.push_back(s.cache->page(h, i));
      hs.cpu_ids.push_back(static_cast<int32_t>(i));
      hs.cpu_k_pages_by_tier[pi.k_tier]++;
      hs.cpu_v_pages_by_tier[pi.v_tier]++;
    } else if (pi.home == PageHome::hot) {
      hs.acc_refs.push_back(s.cache->page(h, i));
      hs.acc_ids.push_back(static_cast<int32_t>(i));
    }
  }
  for (int64_t i = 0; i < n; ++i)
    if (hs.pages[i].home == PageHome::window) {
      hs.acc_refs.push_back(s.cache->page(h, i));
      hs.acc_ids.push_back(static_cast<int32_t>(i));
    }
  s.cpu_view[h] = KvHeadView{hs.cpu_refs.data(), static_cast<int64_t>(hs.cpu_refs.size()) * P};
  s.acc_view[h] = KvHeadView{hs.acc_refs.data(), 0};
}

}  // namespace

void HybridGen::Impl::rebuild_views() {
  for (auto& s : seqs)
    for (int h = 0; h < Hkv; ++h) rebuild_head(s, h, P, platform.host_tiers.size());
  dirty = false;
  refresh_counts();
}

// The accelerator views' token counts (the last page fills as tokens are appended).
void HybridGen::Impl::refresh_counts() {
  for (auto& s : seqs)
    for (int h = 0; h < Hkv; ++h) {
      const int64_t n = s.cache->num_tokens(h);
      const int64_t last = n - (s.cache->num_pages(h) - 1) * P;
      s.acc_view[h].num_tokens = (static_cast<int64_t>(s.heads[h].acc_refs.size()) - 1) * P + last;
    }
}

// ---- Promotion / demotion (semantic policy only)

namespace {

// The hot page with the lowest score among pages [0, end), or -1.
int64_t coldest_hot(const HeadState& hs, int64_t end) {
  int64_t coldest = -1;
  for (int64_t i = 0; i < end; ++i)
    if (hs.pages[i].home == PageHome::hot &&
        (coldest < 0 || hs.pages[i].score < hs.pages[coldest].score))
      coldest = i;
  return coldest;
}

}  // namespace

// Whole pages to the accelerator's hot slots, hottest first (hysteresis 1.5x against the
// coldest promoted page once the slots are full). `host` is sorted by score, descending.
void HybridGen::Impl::promote_hot(SeqState& s, int h, const std::vector<int64_t>& host,
                                  double hot_at) {
  Impl& m = *this;
  HeadState& hs = s.heads[h];
  for (int64_t c : host) {
    if (hs.pages[c].score < hot_at) break;
    if (hs.hot < m.self.hot_slots()) {
      m.to_acc(s, h, c, PageHome::hot);
      continue;
    }
    const int64_t coldest = coldest_hot(hs, m.first_window);
    if (coldest < 0 || hs.pages[c].score <= 1.5 * hs.pages[coldest].score) break;
    const auto [kt, vt] = m.host_tiers_for(hs, coldest);
    m.to_host(s, h, coldest, kt, vt);
    m.to_acc(s, h, c, PageHome::hot);
  }
}

// V between host tiers: the hottest host pages' V on the fast tier, cold ones back to far.
void HybridGen::Impl::place_v(SeqState& s, int h, const std::vector<int64_t>& host, double hot_at,
                              double cold_below) {
  Impl& m = *this;
  HeadState& hs = s.heads[h];
  int64_t want = 0;
  for (int64_t c : host) {
    PageInfo& pi = hs.pages[c];
    if (pi.home != PageHome::host) continue;  // just promoted
    const bool hot = pi.score >= hot_at && want < m.fast_v_cap;
    if (hot) ++want;
    if (hot && pi.v_tier != m.fast && hs.v_fast < m.fast_v_cap)
      m.to_host(s, h, c, pi.k_tier, m.fast);
    else if (!hot && pi.v_tier == m.fast && pi.score < cold_below)
      m.to_host(s, h, c, pi.k_tier, m.far);
  }
}

int64_t HybridGen::Impl::hot_logit_tokens() const { return self.hot_slots() * P; }

// A promoted page gets no top-k hits (the accelerator attends over it densely), so its score
// would freeze. Before each pass the accelerator scores the hot pages with this step's q; a
// token counts as a hit when its logit clears the last step's smallest shipped logit of that
// query head (it would have been selected on the host). The page's score then takes one EMA
// step per decode step of the interval with that hit count.
void HybridGen::Impl::refresh_hot_scores() {
  HB_NVTX_RANGE("hb.hybrid.refresh_hot_scores");
  if (!hot_logits_dev || kth_logit.empty()) return;
  Accelerator& acc = *platform.accelerator;
  const int64_t stride = hot_logit_tokens();
  std::vector<std::vector<std::vector<PageRef>>> refs(B, std::vector<std::vector<PageRef>>(Hkv));
  std::vector<std::vector<int64_t>> ids(static_cast<size_t>(B) * Hkv);
  for (int b = 0; b < B; ++b) {
    std::vector<KvHeadView> heads(Hkv);
    for (int h = 0; h < Hkv; ++h) {
      for (int64_t i = 0; i < first_window; ++i)
        if (seqs[b].heads[h].pages[i].home == PageHome::hot) {
          refs[b][h].push_back(seqs[b].cache->page(h, i));
          ids[static_cast<size_t>(b) * Hkv + h].push_back(i);
        }
      heads[h] = KvHeadView{refs[b][h].data(), static_cast<int64_t>(refs[b][h].size()) * P};
    }
    acc.score_logits(io->q_dev() + static_cast<size_t>(b) * Hq * d, Hq,
                     PagedKvView{Hkv, d, P, shape.kv_dtype, heads.data()}, 0, -1,
                     shape.softmax_scale(),
                     hot_logits_dev.as<float>() + static_cast<size_t>(b) * Hq * stride, stride);
  }
  acc.copy_to_host(hot_logits_host.data(), hot_logits_dev.data(), hot_logits_host.size() * 4);
  acc.synchronize();
  const double w = 1.0 - std::pow(1.0 - cfg().score_alpha, std::max(1, cfg().migrate_every));
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < Hkv; ++h) {
      const auto& pid = ids[static_cast<size_t>(b) * Hkv + h];
      std::vector<int32_t> hits(pid.size(), 0);
      for (int qh = h * G; qh < (h + 1) * G; ++qh) {
        const size_t row = static_cast<size_t>(b) * Hq + qh;
        const float bar = kth_logit[row];
        const float* l = hot_logits_host.data() + row * stride;
        for (size_t j = 0; j < pid.size() * P && bar > kNegInf; ++j) hits[j / P] += l[j] >= bar;
      }
      for (size_t j = 0; j < pid.size(); ++j) {
        PageInfo& pi = seqs[b].heads[h].pages[pid[j]];
        pi.score = static_cast<float>((1 - w) * pi.score + w * hits[j]);
      }
    }
}

// Promoted pages whose refreshed score fell below the uniform share go back to the host.
void HybridGen::Impl::demote_cold(SeqState& s, int h, double cold_below) {
  HeadState& hs = s.heads[h];
  for (int64_t i = 0; i < first_window; ++i)
    if (hs.pages[i].home == PageHome::hot && hs.pages[i].score < cold_below) {
      const auto [kt, vt] = host_tiers_for(hs, i);
      to_host(s, h, i, kt, vt);
    }
}

// Semantic mapping pass: promote pages the top-k keeps selecting, demote cold ones.
void HybridGen::Impl::migrate_pass() {
  HB_NVTX_RANGE("hb.hybrid.migrate_pass");
  for (auto& s : seqs)
    for (int h = 0; h < Hkv; ++h) {
      HeadState& hs = s.heads[h];
      std::vector<int64_t> host;
      for (int64_t i = 0; i < first_window; ++i)
        if (hs.pages[i].home == PageHome::host) host.push_back(i);
      if (host.empty()) continue;
      // A page's expected hits per step if the top-k picked uniformly (k of the C = pages * P
      // tokens per query head, G query heads per KV head).
      const double uniform = static_cast<double>(G) * static_cast<double>(hs.last_k) /
                             static_cast<double>(host.size());
      const double hot_at = std::max(2.0 * uniform, 1e-6), cold_below = uniform;
      std::sort(host.begin(), host.end(), [&](int64_t a, int64_t b) {
        return hs.pages[a].score != hs.pages[b].score ? hs.pages[a].score > hs.pages[b].score
                                                      : a < b;
      });
      if (!kth_logit.empty()) demote_cold(s, h, cold_below);
      if (self.hot_slots() > 0) promote_hot(s, h, host, hot_at);
      if (far >= 0 && fast_v_cap > 0) place_v(s, h, host, hot_at, cold_below);
    }
}

// ---- Plan and load

bool HybridGen::Impl::choose_tiers(PlanResult& r) {
  // Host tiers: fastest first (memtier's order); the far tier is the first CXL or far one.
  for (size_t t = 1; t < platform.host_tiers.size(); ++t) {
    const MemoryKind k = platform.host_tiers[t].location.kind;
    if (k == MemoryKind::cxl || k == MemoryKind::far) {
      far = static_cast<int>(t);
      break;
    }
  }
  naive_tier = cfg().naive_tier;
  if (naive_tier < 0 || naive_tier >= static_cast<int>(platform.host_tiers.size())) {
    r.status = PlanStatus::unsupported;
    r.reason = "naive_tier " + std::to_string(naive_tier) + " does not exist (" +
               std::to_string(platform.host_tiers.size()) + " host tiers)";
    return false;
  }
  k_arenas.resize(platform.host_tiers.size());
  v_arenas.resize(platform.host_tiers.size());
  return true;
}

bool HybridGen::Impl::check_host_capacity(PlanResult& r) {
  // When memtier knows the free bytes, K that does not fit the fast tier spills to the far
  // tier (oldest first, as pages arrive).
  const int64_t host_pages_max = std::max<int64_t>(0, pages_end - min_window_pages);
  const int64_t head_page_bytes = static_cast<int64_t>(block) * Hkv * B;  // a block per head, seq
  if (semantic) {
    const int64_t free_fast = platform.host_tiers[fast].free_bytes;
    if (free_fast >= 0 && far >= 0) fast_k_cap = free_fast / head_page_bytes;
    fast_v_cap =
        far >= 0 ? static_cast<int64_t>(cfg().fast_v_share * static_cast<double>(host_pages_max))
                 : 0;
  }
  auto short_of = [&](int t, int64_t bytes) {
    const int64_t f = platform.host_tiers[t].free_bytes;
    return f >= 0 && bytes > f;
  };
  const int64_t host_bytes = 2 * host_pages_max * head_page_bytes;
  int t = -1;
  if (cfg().mapping == PlacementPolicy::naive && short_of(naive_tier, host_bytes)) t = naive_tier;
  if (semantic && far < 0 && short_of(fast, host_bytes)) t = fast;
  if (semantic && far >= 0 &&
      short_of(far, host_pages_max * head_page_bytes +
                        std::max<int64_t>(0, host_pages_max - fast_k_cap) * head_page_bytes))
    t = far;
  if (t < 0) return true;
  r.status = PlanStatus::oom;
  r.reason = "host KV needs " + std::to_string(host_bytes >> 20) + " MiB; " +
             platform.host_tiers[t].location.to_string() + " has less free";
  return false;
}

void HybridGen::Impl::describe_placement(std::map<std::string, std::string>& par) const {
  par["mapping"] = kPlacementPolicies.name(cfg().mapping);
  switch (cfg().mapping) {
    case PlacementPolicy::semantic:
      par["k_tier"] = platform.host_tiers[fast].location.to_string();
      par["v_tier"] = far >= 0 ? platform.host_tiers[far].location.to_string()
                               : platform.host_tiers[fast].location.to_string() +
                                     " (no CXL/far tier: same as K)";
      par["migrate_every"] = std::to_string(cfg().migrate_every);
      par["fast_v_pages_per_head"] = std::to_string(fast_v_cap);
      if (fast_k_cap != INT64_MAX) par["fast_k_pages_per_head"] = std::to_string(fast_k_cap);
      break;
    case PlacementPolicy::naive:
      par["kv_tier"] = platform.host_tiers[naive_tier].location.to_string();
      break;
    case PlacementPolicy::interleave: {
      std::string t;
      for (const auto& h : platform.host_tiers)
        t += (t.empty() ? "" : ",") + h.location.to_string();
      par["kv_tiers"] = t + " (pages round-robin)";
      break;
    }
  }
}

void HybridGen::Impl::reserve_host_arenas() {
  const size_t per_index = static_cast<size_t>(Hkv) * B;  // blocks per page index
  const size_t host_pages = static_cast<size_t>(std::max<int64_t>(0, pages_end - min_window_pages));
  const size_t blocks = host_pages * per_index;
  switch (cfg().mapping) {
    case PlacementPolicy::naive:
      k_arena(naive_tier).reserve(blocks);
      v_arena(naive_tier).reserve(blocks);
      return;
    case PlacementPolicy::interleave: {
      const size_t n = platform.host_tiers.size();
      for (size_t t = 0; t < n; ++t) {
        k_arena(static_cast<int>(t)).reserve((host_pages + n - 1) / n * per_index);
        v_arena(static_cast<int>(t)).reserve((host_pages + n - 1) / n * per_index);
      }
      return;
    }
    case PlacementPolicy::semantic:
      break;
  }
  const size_t k_fast =
      static_cast<size_t>(std::min<int64_t>(static_cast<int64_t>(host_pages), fast_k_cap));
  k_arena(fast).reserve(k_fast * per_index);
  if (far < 0) {
    v_arena(fast).reserve(blocks);
    return;
  }
  v_arena(far).reserve(blocks);
  if (k_fast < host_pages) k_arena(far).reserve((host_pages - k_fast) * per_index);
  if (fast_v_cap > 0) v_arena(fast).reserve(static_cast<size_t>(fast_v_cap) * per_index);
}

// Prompt: the oldest pages straight into their host tiers, the recent window into the
// accelerator (page by page, since a page's tiers may differ).
void HybridGen::Impl::load_prompt() {
  const Problem& pr = *problem;
  const int64_t prompt = pr.prompt_len();
  const int64_t n_pages = ceil_div(prompt, P);
  first_window = std::max<int64_t>(0, n_pages - self.window_pages());
  seqs.clear();
  seqs.resize(B);
  for (int b = 0; b < B; ++b) {
    SeqState& s = seqs[b];
    s.cache = std::make_unique<PagedKvCache>(shape, P);
    s.heads.resize(Hkv);
    s.cpu_view.resize(Hkv);
    s.acc_view.resize(Hkv);
    const DenseKv& src = pr.workloads[b].prompt;
    for (int64_t i = 0; i < n_pages; ++i) {
      const int64_t t0 = i * P, t1 = std::min(prompt, t0 + P);
      if (i >= first_window) {
        s.cache->append(src, t0, t1, *acc_arena, *acc_arena);
        for (int h = 0; h < Hkv; ++h) s.heads[h].pages.push_back(PageInfo{});
        continue;
      }
      // All heads share the page's tiers at load (counts are per head, identical).
      auto [kt, vt] = host_tiers_for(s.heads[0], i);
      if (newest_k_fast()) kt = i >= first_window - fast_k_cap ? fast : far;
      s.cache->append(src, t0, t1, k_arena(kt), v_arena(vt));
      for (int h = 0; h < Hkv; ++h) {
        PageInfo pi;
        pi.home = PageHome::host;
        pi.k_tier = static_cast<int8_t>(kt);
        pi.v_tier = static_cast<int8_t>(vt);
        s.heads[h].pages.push_back(pi);
        count_fast(s.heads[h], fast, kt, vt, +1);
      }
    }
  }
  rebuild_views();
}

}  // namespace hb::hybrid
