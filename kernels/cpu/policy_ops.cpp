#include "kernels/cpu/policy_ops.h"

#include <algorithm>

#include "core/error.h"
#include "kernels/cpu/page_meta.h"
#include "kernels/cpu/page_pack.h"
#include "kernels/cpu/select.h"
#include "kernels/cpu/token_select.h"
#include "kernels/cpu/topk_select.h"

namespace hb::cpu {

void heavy_hitter_update(const HeavyHitterArgs& a, ThreadPool& pool) {
  const int Hq = a.q_heads, Hkv = a.kv_heads;
  for (int b = 0; b < a.batch; ++b) {
    const size_t row0 = static_cast<size_t>(b) * Hkv;
    for (int h = 0; h < Hkv; ++h) {
      const size_t slot = (row0 + h) * a.cap + a.fresh_slot[row0 + h];
      a.scores[slot] = 0.0f;
      a.tags[slot] = a.fresh_tag;
    }
    accumulate_probabilities(a.logits + static_cast<size_t>(b) * Hq * a.cap, a.cap,
                             a.lse + static_cast<size_t>(b) * Hq, Hq, Hkv, a.filled[b],
                             a.scores + row0 * a.cap, a.cap, &pool);
    for (int h = 0; h < Hkv; ++h) {
      const size_t bh = row0 + h;
      a.victims[bh] = a.filled[b] < a.cap
                          ? -1
                          : static_cast<int32_t>(argmin_tagged(
                                a.scores + bh * a.cap, a.tags + bh * a.cap, a.cap, a.recent_from));
    }
  }
}

void fold_page_bounds(const PageBoundFoldArgs& a) {
  const int d = a.head_dim;
  for (int r = 0; r < a.rows; ++r) {
    float* lo = a.boxes + static_cast<size_t>(r) * 2 * d;
    page_box_add(a.keys + static_cast<size_t>(r) * d, d, a.first, lo, lo + d);
    write_page_bound(lo, lo + d, d, a.block_slots, a.dtype, a.slot, a.c_blocks[r], a.r_blocks[r]);
  }
}

// Two passes of the SIMD scoring kernel, q over the centers and |q| over the radii, then their
// sum: the bound without a kernel of its own (page_meta.h).
void score_page_bounds(const PageBoundScoreArgs& a, ThreadPool& pool) {
  if (a.n_pages <= 0) return;
  const int Hq = a.q_heads, d = a.centers[0].head_dim;
  for (int b = 0; b < a.batch; ++b) {
    const float* q = a.q + static_cast<size_t>(b) * Hq * d;
    float* qa = a.qabs + static_cast<size_t>(b) * Hq * d;
    abs_query(q, static_cast<size_t>(Hq) * d, qa);
    float* s1 = a.scores + static_cast<size_t>(b) * Hq * a.stride;
    float* s2 = a.radius_scores + static_cast<size_t>(b) * Hq * a.stride;
    score_logits(q, Hq, a.centers[b], 0, a.n_pages, a.scale, s1, a.stride, pool);
    score_logits(qa, Hq, a.radii[b], 0, a.n_pages, a.scale, s2, a.stride, pool);
    for (int h = 0; h < Hq; ++h)
      for (int64_t p = 0; p < a.n_pages; ++p) s1[h * a.stride + p] += s2[h * a.stride + p];
  }
}

void topk_rows_ascending(const TopkRowsArgs& a, ThreadPool& pool) {
  topk_select_rows(a.values, a.rows, a.n, a.stride, a.k, a.idx_out, nullptr, &pool);
}

void group_max_rows(const GroupMaxArgs& a) {
  group_max_rows(a.in, a.rows, a.group, a.n, a.stride, a.out, a.out_stride);
  if (!a.counts) return;
  for (int r = 0; r < a.rows / a.group; ++r)
    a.counts[r] = static_cast<int32_t>(count_within(a.out + r * a.out_stride, a.n, a.alpha));
}

void project_rows(const ProjectRowsArgs& a) {
  for (int r = 0; r < a.rows; ++r) {
    const float* x = a.x + r * a.x_stride;
    const float* proj = a.proj + static_cast<size_t>(r / a.rows_per_proj) * a.dim * a.out_width;
    float* out = a.out + static_cast<size_t>(r) * a.out_width;
    std::fill(out, out + a.out_width, 0.0f);
    for (int i = 0; i < a.dim; ++i) {
      const float xi = x[i];
      const float* pr = proj + static_cast<size_t>(i) * a.out_width;
      for (int c = 0; c < a.cols; ++c) out[c] += xi * pr[c];
    }
  }
}

void rows_to_pages(const RowsToPagesArgs& a) {
  const size_t es = dtype_size(a.dtype), row = static_cast<size_t>(a.width) * (a.src_f32 ? 4 : es);
  for (int g = 0; g < a.groups; ++g) {
    const auto* ks = static_cast<const std::byte*>(a.k_src) + g * a.src_stride;
    const auto* vs = a.v_src ? static_cast<const std::byte*>(a.v_src) + g * a.src_stride : nullptr;
    std::byte* kd = a.k_dst + g * a.dst_stride;
    std::byte* vd = a.v_dst ? a.v_dst + g * a.dst_stride : nullptr;
    if (!a.src_f32) {  // rows already in the cache dtype: whole pages from slot 0
      if (a.first_slot != 0 || !a.zero_tail || !vs)
        throw Error("rows_to_pages: dtype rows go to K and V pages from slot 0 (internal)", {},
                    kExitFailure);
      cpu::rows_to_pages(ks, vs, a.count, a.width, a.page_tokens, a.dtype, kd, vd);
      continue;
    }
    for (int64_t i = 0; i < a.count; ++i)
      write_row_to_pages(reinterpret_cast<const float*>(ks + i * row),
                         vs ? reinterpret_cast<const float*>(vs + i * row) : nullptr,
                         a.first_slot + i, a.width, a.page_tokens, a.dtype, kd, vd);
  }
}

}  // namespace hb::cpu
