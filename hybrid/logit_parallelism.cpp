// Mechanism 1, attention logit parallelism: one decode step (hybrid/README.md, "1. Attention
// logit parallelism"). The parts, in order:
//   1. structure: the scheduler's boundary, a migration pass, FIFO, the new token's append;
//   2. q down to the host;
//   3. the accelerator attends over its resident tokens (a partial (o, lse)), while
//   4. the CPU scores its tokens, takes the top-k per query head and gathers those V rows
//      (logit mode), or computes the exact partial over its tokens (lse mode);
//   5. the CPU part crosses the link on the copy engine while the accelerator still attends;
//   6. join; 7. merge (one softmax over the union);
//   8. bookkeeping (attended positions, page hits, traffic) while the merge runs; 9. wait;
//   10. the scheduler records the step.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/phase_names.h"
#include "core/timer.h"
#include "hybrid/hybridgen_impl.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/select.h"
#include "kernels/cpu/topk_select.h"
#include "kernels/nvtx.h"

namespace hb::hybrid {

// ---- 1. Structure: boundary (FIFO + scheduler), promotions, append of the new token.
void HybridGen::Impl::step_structure(int s, StepState& st) {
  HB_NVTX_RANGE("hb.hybrid.structure");
  (void)st;
  const int64_t n_pages = seqs[0].cache->num_pages(0);
  const bool new_page = seqs[0].cache->num_tokens(0) % P == 0;
  if (!all_fit) {
    self.window_pages_ = std::max<int64_t>(1, ceil_div(self.sched_->gpu_window(), P));
    if (mapping.pass_due(s)) {
      refresh_hot_scores();
      migrate_pass();
    }
    apply_window(n_pages + (new_page ? 1 : 0), self.window_pages_);
  }
  for (int b = 0; b < B; ++b) {
    const DecodeStep& ds = problem->workloads[b].step(s);
    // The new token's k, v were produced on the accelerator: appending is accelerator-local.
    seqs[b].cache->append_token(ds.k.data(), ds.v.data(), *acc_arena, *acc_arena);
    for (int h = 0; h < Hkv; ++h)
      if (new_page) mapping.add_window_page(seqs[b].heads[h]);
  }
  if (new_page) dirty = true;
  if (dirty)
    rebuild_views();
  else
    refresh_counts();
  self.pages_migrated_ += migrated_pages_step;
}

// Token counts per head (CPU side, accelerator side), and where the CPU starts scoring: with
// cpu_k_cap on, the newest `cap` host tokens of the sequence's shortest CPU view, rounded down
// to a page (heads with promoted pages fewer may scan up to hot_slots pages more).
void HybridGen::Impl::count_tokens(int64_t cpu_k_cap, StepState& st) {
  st.scan_begin.assign(B, 0);
  for (int b = 0; b < B; ++b) {
    const auto& sq = seqs[b];
    int64_t min_c = INT64_MAX;
    for (int h = 0; h < Hkv; ++h) {
      st.cpu_tok_sum += sq.cpu_view[h].num_tokens;
      st.acc_tok_sum += sq.acc_view[h].num_tokens;
      min_c = std::min(min_c, sq.cpu_view[h].num_tokens);
    }
    if (cpu_k_cap > 0 && logit && min_c > cpu_k_cap) st.scan_begin[b] = (min_c - cpu_k_cap) / P * P;
    for (int h = 0; h < Hkv; ++h) st.scan_tok_sum += sq.cpu_view[h].num_tokens - st.scan_begin[b];
  }
  st.has_cpu = st.cpu_tok_sum > 0;
}

// Rows shipped per query head: k = min(C, ceil(ratio * C)) of the C tokens it scores, within
// the buffers; under run --kv-budget also at most the budget minus the head's resident tokens
// (budget.cpp), so resident + top-k attend exactly the budget whatever the window's fill.
void HybridGen::Impl::choose_rows(double ratio, StepState& st) {
  if (!st.has_cpu || !logit) return;
  for (int b = 0; b < B; ++b)
    for (int qh = 0; qh < Hq; ++qh) {
      const int64_t all = seqs[b].cpu_view[shape.kv_head_of(qh)].num_tokens;
      const int64_t c = all - st.scan_begin[b];
      int64_t k =
          std::min<int64_t>(c, static_cast<int64_t>(std::ceil(ratio * static_cast<double>(c))));
      k = std::min(k, k_cap);
      if (problem->kv_budget_tokens > 0)
        k = std::min(k,
                     std::max<int64_t>(0, problem->kv_budget_tokens -
                                              seqs[b].acc_view[shape.kv_head_of(qh)].num_tokens));
      krow[static_cast<size_t>(b) * Hq + qh] = k;
      st.n_ext = std::max(st.n_ext, k);
      if (k < all) st.approx = true;
    }
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < Hkv; ++h)
      seqs[b].heads[h].last_k = krow[static_cast<size_t>(b) * Hq + h * G];
}

// ---- 2. q down to the host (the CPU side needs it).
void HybridGen::Impl::download_q(StepState& st) {
  HB_NVTX_RANGE("hb.hybrid.download_q");
  if (!st.has_cpu) return;
  Accelerator& acc = *platform.accelerator;
  const int64_t t0 = now_ns();
  acc.copy_to_host(io->q_host.data(), io->q_dev(), io->q_bytes());
  st.transfer_ns += acc.synchronize();
  st.sync_q_wall = now_ns() - t0;
  ++st.syncs;
  st.tr->d2h_bytes += static_cast<int64_t>(io->q_bytes());
}

// ---- 3. Accelerator side: attention over its resident tokens, as a partial (o, lse).
void HybridGen::Impl::accelerator_attention(std::vector<DecodeAttentionArgs>& args, StepState& st) {
  args.resize(B);
  for (int b = 0; b < B; ++b) {
    auto& a = args[b];
    a.q = io->q_dev() + static_cast<size_t>(b) * Hq * d;
    a.kv = acc_view(b);
    a.q_heads = Hq;
    a.scale = shape.softmax_scale();
    a.o = (st.has_cpu ? o_loc.as<float>() : io->o_dev()) + static_cast<size_t>(b) * Hq * d;
    a.lse = (st.has_cpu ? lse_loc.as<float>() : io->lse_dev()) + static_cast<size_t>(b) * Hq;
  }
  st.t_cpu0 = st.t_cpu1 = now_ns();
  if (cfg().overlap || !st.has_cpu) {
    platform.accelerator->decode_attention(args.data(), B);
    ++st.launches;
  }
}

// ---- 4a. CPU side, logit mode: logits over its tokens, top-k, gather. cpu_select=fused
// (default): one pass over K keeps a streaming top-k per query head (cpu::select_topk), no
// logit array; its time is reported as cpu.score and cpu.topk reads 0. separate: every logit
// is written, then each row's top-k is selected from them. Same rows and logits either way.
void HybridGen::Impl::cpu_logits_topk_gather(StepState& st, float scale) {
  HB_NVTX_RANGE("hb.hybrid.cpu_logits_topk_gather");
  ThreadPool& pool = *platform.host_pool;
  const int64_t n_ext = st.n_ext;
  if (n_ext == 0) {  // no row to ship (a --kv-budget the resident tokens already fill)
    st.t_score = st.t_topk = st.t_gather = now_ns();
    return;
  }
  if (cfg().cpu_select == CpuSelect::fused) {
    for (int b = 0; b < B; ++b) {
      const size_t row0 = static_cast<size_t>(b) * Hq;
      cpu::select_topk(io->q_host.data() + row0 * d, Hq, cpu_view(b), st.scan_begin[b], scale,
                       krow.data() + row0, topi.data() + row0 * n_ext, topv.data() + row0 * n_ext,
                       n_ext, pool, best_simd_level(),
                       floor_hint.empty() ? nullptr : floor_hint.data() + row0);
    }
    st.t_score = st.t_topk = now_ns();
  } else {
    for (int b = 0; b < B; ++b)
      cpu::score_logits(io->q_host.data() + static_cast<size_t>(b) * Hq * d, Hq, cpu_view(b),
                        st.scan_begin[b], -1, scale,
                        logits.data() + static_cast<size_t>(b) * Hq * ccap, ccap, pool);
    st.t_score = now_ns();
    HB_NVTX_RANGE("hb.hybrid.topk");
    pool.parallel_for(static_cast<int64_t>(B) * Hq, [&](int64_t row, int) {
      const int b = static_cast<int>(row / Hq), qh = static_cast<int>(row % Hq);
      const int64_t begin = st.scan_begin[b];
      const int64_t c = seqs[b].cpu_view[shape.kv_head_of(qh)].num_tokens - begin;
      int32_t* ix = topi.data() + static_cast<size_t>(row) * n_ext;
      // Unordered (ascending positions): the gather then reads the V pages in address order.
      cpu::topk_select_rows(logits.data() + static_cast<size_t>(row) * ccap, 1, c, ccap, krow[row],
                            ix, topv.data() + static_cast<size_t>(row) * n_ext, nullptr);
      if (begin > 0)
        for (int64_t i = 0; i < krow[row]; ++i) ix[i] += static_cast<int32_t>(begin);
    });
    st.t_topk = now_ns();
  }
  gather_shipped_rows(st);
  st.t_gather = now_ns();
}

// The selected V rows into pinned staging, a block at a time: with ship_rows=group a block is
// one (sequence, KV head) and holds the union of its query heads' rows, each once, with every
// entry's row index beside its logit; with head, a block per query head (the port's format).
void HybridGen::Impl::gather_shipped_rows(StepState& st) {
  HB_NVTX_RANGE("hb.hybrid.gather");
  ThreadPool& pool = *platform.host_pool;
  const int64_t n_ext = st.n_ext, g = ship_group;
  const int64_t blocks = static_cast<int64_t>(B) * Hq / g;
  auto* ext_l = ext_logits_host.as<float>();
  auto* ext_r = ext_rows_host.as<int32_t>();
  auto* ext_v = ext_v_host.as<std::byte>();
  if (shared_rows())
    pool.parallel_for(blocks, [&](int64_t blk, int) {
      const size_t row0 = static_cast<size_t>(blk * g);
      ucount[blk] =
          cpu::ascending_union(topi.data() + row0 * n_ext, krow.data() + row0, static_cast<int>(g),
                               n_ext, urows.data() + row0 * n_ext, ext_r + row0 * n_ext);
    });
  else  // a head's block is its own selection as it stands
    std::copy(krow.begin(), krow.begin() + blocks, ucount.begin());
  st.block_rows = blocks > 0 ? *std::max_element(ucount.begin(), ucount.begin() + blocks) : 0;
  // In a few chunks of blocks, each shipped as soon as it is gathered (with overlap on), so the
  // copy engine moves one chunk while the next is gathered and only the last one's copy is left
  // after the CPU part.
  const int64_t chunk = ceil_div(blocks, cfg().overlap ? kUploadChunks : 1);
  for (int64_t b0 = 0; b0 < blocks; b0 += chunk) {
    const int64_t b1 = std::min(blocks, b0 + chunk);
    pool.parallel_for(b1 - b0, [&](int64_t i, int) {
      const int64_t blk = b0 + i;
      const size_t row0 = static_cast<size_t>(blk * g);
      const int b = static_cast<int>(row0 / Hq);
      const int kvh = shape.kv_head_of(static_cast<int>(row0 % Hq));
      cpu::gather_rows(cpu_view(b), kvh, shipped_rows(blk, n_ext), ucount[blk],
                       ext_v + static_cast<size_t>(blk * st.block_rows) * d * es);
      for (size_t row = row0; row < row0 + static_cast<size_t>(g); ++row) {
        const size_t base = row * n_ext;
        std::memcpy(ext_l + base, topv.data() + base, static_cast<size_t>(krow[row]) * 4);
        // Padding entries (heads with fewer CPU tokens) weigh exactly zero and read row 0.
        for (int64_t i = krow[row]; i < n_ext; ++i) ext_l[base + i] = kNegInf, ext_r[base + i] = 0;
      }
    });
    if (cfg().overlap) upload_blocks(st, b0, b1);
  }
}

// ---- 5. Transfer: the top-k logits (+ row indices) and V rows of blocks [b0, b1) up to the
// accelerator as side copies on its copy engine, so they overlap the accelerator's attention
// and the rest of the gather (hybrid/README.md, "Critical path").
void HybridGen::Impl::upload_blocks(StepState& st, int64_t b0, int64_t b1) {
  HB_NVTX_RANGE("hb.hybrid.upload");
  Accelerator& acc = *platform.accelerator;
  const size_t entries = static_cast<size_t>((b1 - b0) * ship_group * st.n_ext);
  const size_t e0 = static_cast<size_t>(b0 * ship_group * st.n_ext);
  const size_t row_bytes = static_cast<size_t>(d) * es;
  const size_t v0 = static_cast<size_t>(b0 * st.block_rows) * row_bytes;
  const size_t vb = static_cast<size_t>((b1 - b0) * st.block_rows) * row_bytes;
  acc.copy_to_device_async(ext_logits_dev.as<float>() + e0, ext_logits_host.as<float>() + e0,
                           entries * 4);
  if (shared_rows())
    acc.copy_to_device_async(ext_rows_dev.as<int32_t>() + e0, ext_rows_host.as<int32_t>() + e0,
                             entries * 4);
  acc.copy_to_device_async(ext_v_dev.as<std::byte>() + v0, ext_v_host.as<std::byte>() + v0, vb);
  st.tr->h2d_bytes += static_cast<int64_t>(entries * (shared_rows() ? 8 : 4) + vb);
}

// ---- 4b. CPU side, lse mode: the exact partial (o, lse) over its tokens.
void HybridGen::Impl::cpu_exact_partial(StepState& st, float scale) {
  HB_NVTX_RANGE("hb.hybrid.cpu_exact_partial");
  std::vector<DecodeAttentionArgs> cargs(B);
  for (int b = 0; b < B; ++b) {
    auto& a = cargs[b];
    a.q = io->q_host.data() + static_cast<size_t>(b) * Hq * d;
    a.kv = cpu_view(b);
    a.q_heads = Hq;
    a.scale = scale;
    a.o = o_cpu_host.as<float>() + static_cast<size_t>(b) * Hq * d;
    a.lse = lse_cpu_host.as<float>() + static_cast<size_t>(b) * Hq;
  }
  cpu::decode_attention(cargs.data(), B, *platform.host_pool);
  st.t_score = now_ns();
}

// ---- 5. Transfer: the CPU part up to the accelerator. Logit mode shipped its blocks as they
// were gathered (upload_blocks); without overlap (the serial ablation) they go now, after the
// accelerator's attention. LSE mode ships the exact partial. The merge queued after
// order_side_copies waits for them, the attention queued before does not.
void HybridGen::Impl::upload_cpu_part(StepState& st) {
  HB_NVTX_RANGE("hb.hybrid.upload");
  Accelerator& acc = *platform.accelerator;
  const size_t qn = static_cast<size_t>(B) * Hq;
  if (logit && !cfg().overlap) {
    if (st.n_ext > 0) upload_blocks(st, 0, static_cast<int64_t>(qn) / ship_group);
  } else if (!logit) {
    acc.copy_to_device_async(o_x.data(), o_cpu_host.data(), qn * d * 4);
    acc.copy_to_device_async(lse_x.data(), lse_cpu_host.data(), qn * 4);
    st.tr->h2d_bytes += static_cast<int64_t>(qn * (d + 1) * 4);
  }
  acc.order_side_copies();
}

// ---- 7. Merge: one softmax over [CPU top-k | accelerator] logits. The accelerator's part is
// already a flash-decoding partial; the shipped logits become a second partial and the two
// merge exactly (the same softmax over the union). lse mode merges the partials.
void HybridGen::Impl::merge(StepState& st, float scale) {
  HB_NVTX_RANGE("hb.hybrid.merge");
  Accelerator& acc = *platform.accelerator;
  const size_t qn = static_cast<size_t>(B) * Hq;
  if (logit && st.n_ext == 0) {  // nothing shipped: the accelerator's partial is the whole step
    const float* o_part = o_loc.as<float>();
    const float* l_part = lse_loc.as<float>();
    acc.merge_partials(1, &o_part, &l_part, static_cast<int>(qn), d, io->o_dev(), io->lse_dev());
    ++st.launches;
    return;
  }
  if (logit) {
    LogitMergeArgs la;
    la.q = io->q_dev();
    la.q_heads = static_cast<int>(qn);  // every (sequence, head) row at once: no local part
    la.scale = scale;
    la.ext_logits = ext_logits_dev.as<float>();
    la.ext_v = ext_v_dev.data();
    la.ext_dtype = shape.kv_dtype;
    la.n_ext = st.n_ext;
    if (shared_rows()) {
      la.ext_rows = ext_rows_dev.as<int32_t>();
      la.ext_group = ship_group;
      la.ext_block_rows = st.block_rows;
    }
    la.local = PagedKvView{0, d, P, shape.kv_dtype, nullptr};
    la.o = o_x.as<float>();
    la.lse = lse_x.as<float>();
    acc.logit_merge_attention(la);
    ++st.launches;
  }
  const float* o_parts[2] = {o_x.as<float>(), o_loc.as<float>()};  // fixed order: CPU, acc.
  const float* l_parts[2] = {lse_x.as<float>(), lse_loc.as<float>()};
  acc.merge_partials(2, o_parts, l_parts, static_cast<int>(qn), d, io->o_dev(), io->lse_dev());
  ++st.launches;
}

// ---- 8. Bookkeeping while the accelerator merges: page hits, attended positions, traffic.
void HybridGen::Impl::bookkeeping(StepState& st, StepResult& out) {
  HB_NVTX_RANGE("hb.hybrid.bookkeeping");
  std::vector<int64_t> v_rows_by_tier(platform.host_tiers.size(), 0);
  if (st.has_cpu && logit) {
    count_hits(st, v_rows_by_tier);
    // Listed after the timed step, for scored steps only (HybridGen::fill_attended).
    attended_owed = cfg().report_attended && st.approx;
    attended_n_ext = st.n_ext;
  } else {
    attended_owed = false;
  }
  count_traffic(st, v_rows_by_tier);
}

// Top-k hits per page (the semantic mapping's evidence) and V rows read per host tier.
void HybridGen::Impl::count_hits(const StepState& st, std::vector<int64_t>& v_rows_by_tier) {
  for (int b = 0; b < B; ++b) {
    SeqState& sq = seqs[b];
    for (int qh = 0; qh < Hq; ++qh) {
      const size_t row = static_cast<size_t>(b) * Hq + qh;
      HeadState& hs = sq.heads[shape.kv_head_of(qh)];
      const int32_t* ix = topi.data() + row * st.n_ext;
      const float* lv = topv.data() + row * st.n_ext;
      float bar = krow[row] > 0 ? lv[0] : kNegInf, top = bar;
      for (int64_t i = 0; i < krow[row]; ++i) {
        hs.pages[hs.cpu_ids[ix[i] / P]].hits++;
        bar = std::min(bar, lv[i]);
        top = std::max(top, lv[i]);
      }
      if (!kth_logit.empty()) kth_logit[row] = bar;
      // The next step's query is close to this one's, and so is its k-th logit: start there,
      // lowered by a share of the selection's spread (hybrid/README.md, "select_hint").
      if (!floor_hint.empty())
        floor_hint[row] = krow[row] > 0 ? bar - static_cast<float>(cfg().hint_margin) * (top - bar)
                                        : std::numeric_limits<float>::quiet_NaN();
    }
    // V rows read on the host: each shipped block's rows once (a group's union, or a head's).
    for (int64_t blk = static_cast<int64_t>(b) * Hq / ship_group;
         blk < static_cast<int64_t>(b + 1) * Hq / ship_group; ++blk) {
      const HeadState& hs = sq.heads[shape.kv_head_of(static_cast<int>(blk * ship_group % Hq))];
      const int32_t* u = shipped_rows(blk, st.n_ext);
      for (int64_t i = 0; i < ucount[blk]; ++i)
        v_rows_by_tier[hs.pages[hs.cpu_ids[u[i] / P]].v_tier]++;
    }
    // Page scores: EMA of hits per step on the host; promoted pages are refreshed before the
    // migration pass (page_homes.cpp, refresh_hot_scores).
    for (int h = 0; h < Hkv; ++h) mapping.end_step(sq.heads[h]);
  }
}

// Attended positions per (sequence, query head) for the accuracy score: the top-k rows, then
// every accelerator-resident token. Untimed: the runner asks for it after the step, for the
// steps it scores (hybrid/README.md, "Accuracy bookkeeping"); the state it reads stands until
// the next step's migrations.
void HybridGen::Impl::fill_attended(int64_t n_ext, StepResult& out) {
  ThreadPool& pool = *platform.host_pool;
  std::vector<std::vector<int64_t>> acc_pos(static_cast<size_t>(B) * Hkv);
  pool.parallel_for(static_cast<int64_t>(B) * Hkv, [&](int64_t bh, int) {
    const SeqState& sq = seqs[bh / Hkv];
    const int h = static_cast<int>(bh % Hkv);
    const HeadState& hs = sq.heads[h];
    const int64_t n = sq.acc_view[h].num_tokens, na = static_cast<int64_t>(hs.acc_ids.size());
    auto& pos = acc_pos[bh];
    pos.resize(static_cast<size_t>(n));
    for (int64_t j = 0, w = 0; j < na; ++j) {
      const int64_t base = static_cast<int64_t>(hs.acc_ids[j]) * P;
      const int64_t cnt = j + 1 < na ? P : n - (na - 1) * P;
      for (int64_t t = 0; t < cnt; ++t) pos[w++] = base + t;
    }
  });
  out.attended.resize(static_cast<size_t>(B) * Hq);  // rows keep their memory (StepResult)
  pool.parallel_for(static_cast<int64_t>(B) * Hq, [&](int64_t row, int) {
    const int b = static_cast<int>(row / Hq), h = shape.kv_head_of(static_cast<int>(row % Hq));
    const HeadState& hs = seqs[b].heads[h];
    const auto& acc = acc_pos[static_cast<size_t>(b) * Hkv + h];
    const int32_t* ix = topi.data() + static_cast<size_t>(row) * n_ext;
    const int64_t k = krow[row];
    auto& att = out.attended[row];
    att.resize(static_cast<size_t>(k) + acc.size());
    for (int64_t i = 0; i < k; ++i)
      att[i] = static_cast<int64_t>(hs.cpu_ids[ix[i] / P]) * P + ix[i] % P;
    std::copy(acc.begin(), acc.end(), att.begin() + k);
  });
}

// Traffic, counted from the sizes asked for.
void HybridGen::Impl::count_traffic(StepState& st, const std::vector<int64_t>& v_rows_by_tier) {
  Traffic& tr = *st.tr;
  const int64_t row_v = static_cast<int64_t>(d * es);
  const int64_t kv_tok = 2 * row_v;  // K+V of one token, one head
  const auto bl = static_cast<int64_t>(block);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < Hkv; ++h) {
      const SeqState& sq = seqs[b];
      const HeadState& hs = sq.heads[h];
      for (size_t t = 0; t < platform.host_tiers.size() && st.has_cpu; ++t) {
        const MemoryKind kind = tier_kind(static_cast<int>(t));
        if (!logit) tr.read(Processor::cpu, kind, hs.cpu_v_pages_by_tier[t] * bl);
        if (st.scan_begin[b] == 0) tr.read(Processor::cpu, kind, hs.cpu_k_pages_by_tier[t] * bl);
      }
      // cpu_k_cap: K of the scored pages only.
      if (st.has_cpu && st.scan_begin[b] > 0)
        for (size_t j = static_cast<size_t>(st.scan_begin[b] / P); j < hs.cpu_ids.size(); ++j)
          tr.read(Processor::cpu, tier_kind(hs.pages[hs.cpu_ids[j]].k_tier), bl);
      tr.read(Processor::accelerator, MemoryKind::accelerator, sq.acc_view[h].num_tokens * kv_tok);
    }
  for (size_t t = 0; t < v_rows_by_tier.size(); ++t)
    st.rows.read(Processor::cpu, tier_kind(static_cast<int>(t)), v_rows_by_tier[t] * row_v);
  tr += st.rows;
  const size_t qn = static_cast<size_t>(B) * Hq;
  if (st.has_cpu && logit)  // the merge reads every entry's logit (+ row index) and V row
    tr.read(Processor::accelerator, MemoryKind::accelerator,
            static_cast<int64_t>(qn) * st.n_ext * ((shared_rows() ? 8 : 4) + row_v));
  tr.write(Processor::accelerator, MemoryKind::accelerator, shape.kv_bytes_per_token() * B);
  const double cpu_tok = static_cast<double>(st.cpu_tok_sum),
               acc_tok = static_cast<double>(st.acc_tok_sum);
  tr.cpu_flops = (logit ? 2.0 : 4.0) * Hq * d * cpu_tok / Hkv;
  // Logit mode: each query head's top-k scans the logits of all its CPU tokens.
  if (logit) tr.select(Processor::cpu, cpu_tok * Hq / Hkv);
  tr.accelerator_flops =
      4.0 * Hq * d * acc_tok / Hkv + (logit ? 2.0 * static_cast<double>(qn) * st.n_ext * d : 0.0);
  tr += mig;
}

void HybridGen::Impl::record_phases(const StepState& st, StepResult& out) const {
  const int64_t cpu_ns = st.has_cpu ? st.t_cpu1 - st.t_cpu0 : 0;
  out.phase_ns[phase::kCpu] = cpu_ns;
  if (st.has_cpu && logit) {
    out.phase_ns[phase::kCpuScore] = st.t_score - st.t_cpu0;
    out.phase_ns[phase::kCpuTopk] = st.t_topk - st.t_score;
    out.phase_ns[phase::kCpuGather] = st.t_gather - st.t_topk;
  } else if (st.has_cpu) {
    out.phase_ns[phase::kCpuAttention] = st.t_score - st.t_cpu0;
  }
  out.phase_ns[phase::kAccelerator] = st.acc_ns;
  out.phase_ns[phase::kTransfer] = st.transfer_ns;
  out.phase_ns[phase::kMerge] = st.merge_ns;
  out.phase_ns[phase::kWait] = st.wait_ns;
  out.phase_ns[phase::kBookkeeping] = st.t_book - st.t_pre_book;
  // Host wall time blocked in the other synchronisations (busy time + hand-off latency).
  out.phase_ns[phase::kSyncQ] = st.sync_q_wall;
  out.phase_ns[phase::kSyncFinal] = st.sync_final_wall;
}

// The wall clock's: the CPU side's span, the accelerator's busy time, the upload; the gather is the
// part of the CPU side that scales with the rows (logit mode).
HybridGen::Impl::SideTimes HybridGen::Impl::measured_side_times(const StepState& st) const {
  if (!st.has_cpu) return {0, static_cast<double>(st.acc_ns), 0, -1};
  return {static_cast<double>(st.t_cpu1 - st.t_cpu0), static_cast<double>(st.acc_ns),
          static_cast<double>(st.transfer_ns),
          logit ? static_cast<double>(st.t_gather - st.t_topk) : -1.0};
}

// The platform's: the step's traffic priced per resource; the rows' share is what the CPU side
// would take less without the shipped rows' reads.
HybridGen::Impl::SideTimes HybridGen::Impl::modeled_side_times(const StepState& st,
                                                               const Traffic& step,
                                                               const OverlapStructure& o) const {
  const ResourceTimesNs all = platform.step_times->price(step, o);
  if (!st.has_cpu) return {0, all.accelerator_ns, 0, -1};
  double rows_ns = -1;
  if (logit) {
    Traffic without = step;
    for (int k = 0; k < kMemoryKinds; ++k)
      without.bytes_read[int(Processor::cpu)][k] -= st.rows.bytes_read[int(Processor::cpu)][k];
    rows_ns = all.cpu_ns - platform.step_times->price(without, o).cpu_ns;
  }
  return {all.cpu_ns, all.accelerator_ns, all.transfer_ns, rows_ns};
}

void HybridGen::fill_attended(int s, StepResult& out) {
  if (!impl_ || !impl_->attended_owed) return;
  impl_->fill_attended(impl_->attended_n_ext, out);
  impl_->attended_owed = false;
}

void HybridGen::step(int s, StepResult& out) {
  HB_NVTX_RANGE("hb.hybrid.step");
  Impl& m = *impl_;
  Accelerator& acc = *m.platform.accelerator;
  const float scale = m.shape.softmax_scale();
  m.mig = Traffic{};
  m.migrated_pages_step = 0;
  StepState st;
  st.s = s;
  st.tr = &out.traffic;

  const int64_t t_begin = now_ns();
  m.step_structure(s, st);
  out.phase_ns[phase::kMigrate] = now_ns() - t_begin;
  m.count_tokens(sched_->cpu_k_cap(), st);
  m.choose_rows(sched_->ratio(), st);
  m.download_q(st);
  std::vector<DecodeAttentionArgs> args;
  m.accelerator_attention(args, st);
  if (st.has_cpu) {
    if (m.logit)
      m.cpu_logits_topk_gather(st, scale);
    else
      m.cpu_exact_partial(st, scale);
    st.t_cpu1 = now_ns();
    if (!cfg_.overlap) {  // ablation: the accelerator starts only now
      acc.decode_attention(args.data(), m.B);
      ++st.launches;
    }
    m.upload_cpu_part(st);
    // ---- 6. Join: the accelerator side's busy time (its attention; the side copies are copy
    // engine time). The wait is what of the attention and the upload outlasted the CPU part.
    st.acc_ns = acc.synchronize();
    ++st.syncs;
    st.wait_ns = now_ns() - st.t_cpu1;
    m.merge(st, scale);
  }
  acc.copy_to_host(m.io->o_host.data(), m.io->o_dev(), m.io->o_bytes());
  out.traffic.d2h_bytes += static_cast<int64_t>(m.io->o_bytes());  // the output comes down
  st.t_pre_book = now_ns();
  m.bookkeeping(st, out);
  st.t_book = now_ns();

  // ---- 9. Wait for the merge and the output.
  st.merge_ns = acc.synchronize();
  st.sync_final_wall = now_ns() - st.t_book;
  ++st.syncs;
  if (!st.has_cpu) st.acc_ns = st.merge_ns, st.merge_ns = 0;
  out.o = m.io->o_host.to_vector();
  out.traffic.kernel_launches += st.launches;
  out.traffic.syncs += st.syncs;
  m.record_phases(st, out);

  // ---- 10. Scheduler: the CPU side that runs beside the accelerator's attention (scoring,
  // top-k, gather, or the exact partial) against that attention. The q download and the upload
  // are serial with both (README, "Critical path"): recorded, not balanced.
  const int64_t heads_total = static_cast<int64_t>(m.B) * m.Hkv;
  const Impl::SideTimes t = m.platform.step_times ? m.modeled_side_times(st, out.traffic, overlap())
                                                  : m.measured_side_times(st);
  sched_->record(s, t.cpu_ns, t.accelerator_ns, st.cpu_tok_sum / heads_total,
                 st.acc_tok_sum / heads_total, t.transfer_ns, t.rows_ns);
}

}  // namespace hb::hybrid
