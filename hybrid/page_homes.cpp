// HybridGen's paged cache and where its pages are: the bytes of the moves KvMapping decides
// (mechanism 3, kv_mapping.h) and of the recent window's FIFO (mechanism 1), with their
// traffic; the two views the step reads; the host arenas; the prompt's load; the accelerator's
// re-scoring of promoted pages before a migration pass.
#include <algorithm>

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

void HybridGen::Impl::bytes_to_host(SeqState& s, int h, int64_t i, const PageInfo& from, int kt,
                                    int vt) {
  HB_NVTX_RANGE("hb.hybrid.migrate_to_host");
  const size_t moved = s.cache->migrate_page(h, i, &k_arena(kt), &v_arena(vt));
  const auto bl = static_cast<int64_t>(block);
  if (from.home != PageHome::host) {
    // The copy engine reads accelerator memory and writes the host tiers.
    mig.d2h_bytes += static_cast<int64_t>(moved);
    mig.read(Processor::accelerator, MemoryKind::accelerator, static_cast<int64_t>(moved));
    mig.write(Processor::accelerator, tier_kind(kt), bl);
    mig.write(Processor::accelerator, tier_kind(vt), bl);
  } else {
    if (from.k_tier != kt) mig.read(Processor::cpu, tier_kind(from.k_tier), bl);
    if (from.k_tier != kt) mig.write(Processor::cpu, tier_kind(kt), bl);
    if (from.v_tier != vt) mig.read(Processor::cpu, tier_kind(from.v_tier), bl);
    if (from.v_tier != vt) mig.write(Processor::cpu, tier_kind(vt), bl);
  }
  if (moved) ++migrated_pages_step;
  dirty = true;
}

void HybridGen::Impl::bytes_to_acc(SeqState& s, int h, int64_t i, const PageInfo& from) {
  HB_NVTX_RANGE("hb.hybrid.migrate_to_accelerator");
  if (from.home == PageHome::host) {
    const size_t moved = s.cache->migrate_page(h, i, acc_arena.get(), acc_arena.get());
    // The copy engine reads the host tiers (baselines/README's convention).
    mig.h2d_bytes += static_cast<int64_t>(moved);
    mig.read(Processor::accelerator, tier_kind(from.k_tier), static_cast<int64_t>(block));
    mig.read(Processor::accelerator, tier_kind(from.v_tier), static_cast<int64_t>(block));
    mig.write(Processor::accelerator, MemoryKind::accelerator, static_cast<int64_t>(moved));
    ++migrated_pages_step;
  }
  dirty = true;
}

class HybridGen::Impl::CacheMover final : public PageMover {
 public:
  CacheMover(Impl& m, SeqState& s, int h) : m_(m), s_(s), h_(h) {}
  void to_host(int64_t page, const PageInfo& from, int k_tier, int v_tier) override {
    m_.bytes_to_host(s_, h_, page, from, k_tier, v_tier);
  }
  void to_accelerator(int64_t page, const PageInfo& from) override {
    m_.bytes_to_acc(s_, h_, page, from);
  }

 private:
  Impl& m_;
  SeqState& s_;
  int h_;
};

// Moves the recent window's first page so the window holds `window_pages` pages once the caches
// have `pages_after` pages (FIFO eviction, and the scheduler's boundary moves).
void HybridGen::Impl::apply_window(int64_t pages_after, int64_t window_pages) {
  const int64_t target = std::max<int64_t>(0, pages_after - window_pages);
  while (first_window < target) {
    for (auto& s : seqs)
      for (int h = 0; h < Hkv; ++h) {
        CacheMover mover(*this, s, h);
        mapping.evict(s.heads[h], first_window, mover);
      }
    ++first_window;
  }
  while (first_window > target) {
    --first_window;
    for (auto& s : seqs)
      for (int h = 0; h < Hkv; ++h) {
        CacheMover mover(*this, s, h);
        mapping.return_to_window(s.heads[h], first_window, mover);
      }
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

// ---- Migration pass (policy semantic)

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
      for (size_t j = 0; j < pid.size(); ++j)
        mapping.refresh_promoted(seqs[b].heads[h].pages[pid[j]], hits[j]);
    }
}

// The mapping's pass over every head: promote pages the top-k keeps selecting, demote cold ones.
void HybridGen::Impl::migrate_pass() {
  HB_NVTX_RANGE("hb.hybrid.migrate_pass");
  for (auto& s : seqs)
    for (int h = 0; h < Hkv; ++h) {
      CacheMover mover(*this, s, h);
      // Rows the top-k selected per step for this KV head (G query heads, k each).
      const double selected = static_cast<double>(G) * static_cast<double>(s.heads[h].last_k);
      mapping.migrate(s.heads[h], first_window, selected, !kth_logit.empty(), mover);
    }
}

// ---- Plan and load

bool HybridGen::Impl::choose_tiers(PlanResult& r) {
  if (std::string why = mapping.choose_tiers(platform.host_tiers); !why.empty()) {
    r.status = PlanStatus::unsupported;
    r.reason = std::move(why);
    return false;
  }
  k_arenas.resize(platform.host_tiers.size());
  v_arenas.resize(platform.host_tiers.size());
  return true;
}

bool HybridGen::Impl::check_host_capacity(PlanResult& r) {
  const int64_t host_pages_max = std::max<int64_t>(0, pages_end - min_window_pages);
  const int64_t head_page_bytes = static_cast<int64_t>(block) * Hkv * B;  // a block per head, seq
  std::string why = mapping.plan_capacity(host_pages_max, head_page_bytes, self.hot_slots());
  if (why.empty()) return true;
  r.status = PlanStatus::oom;
  r.reason = std::move(why);
  return false;
}

void HybridGen::Impl::reserve_host_arenas() {
  const size_t per_index = static_cast<size_t>(Hkv) * B;  // blocks per page index
  const int64_t host_pages = std::max<int64_t>(0, pages_end - min_window_pages);
  for (const auto& want : mapping.reservations(host_pages))
    (want.v ? v_arena(want.tier) : k_arena(want.tier))
        .reserve(static_cast<size_t>(want.pages) * per_index);
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
    // Consecutive pages with the same arenas are appended in one call (written in parallel),
    // in the same page order as one by one.
    PageArena *run_k = nullptr, *run_v = nullptr;
    int64_t run_begin = 0;
    auto flush = [&](int64_t t) {
      if (run_k && t > run_begin)
        s.cache->append(src, run_begin, t, *run_k, *run_v, &ThreadPool::global());  // untimed
      run_begin = t;
    };
    for (int64_t i = 0; i < n_pages; ++i) {
      PageArena *k = acc_arena.get(), *v = acc_arena.get();
      if (i >= first_window) {
        for (int h = 0; h < Hkv; ++h) mapping.add_window_page(s.heads[h]);
      } else {
        // All heads share the page's tiers at load (their page tables are alike).
        const auto tiers = mapping.prompt_tiers(s.heads[0], i, first_window);
        k = &k_arena(tiers.first);
        v = &v_arena(tiers.second);
        for (int h = 0; h < Hkv; ++h) mapping.add_host_page(s.heads[h], tiers);
      }
      if (k != run_k || v != run_v) flush(i * P);
      run_k = k;
      run_v = v;
    }
    flush(prompt);
  }
  rebuild_views();
}

}  // namespace hb::hybrid
