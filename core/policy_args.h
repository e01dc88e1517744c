#pragma once
// The arguments of the policy kernels (core/accelerator.h): the scoring and selection steps of
// the sparse baselines (H2O, Quest, InfiniGen) written as accelerator operations with plain
// contracts, so each strategy runs on every accelerator (kernels/cpu and kernels/cuda implement
// the same contract). Pointers are accelerator memory (or staging memory) and are read when the
// operation runs; the host arrays marked "host" are copied when it is queued.
#include <cstddef>
#include <cstdint>

#include "core/dtype.h"
#include "core/kv_cache.h"

namespace hb {

// H2O's score update and victim choice over `batch` sequences, each with kv_heads caches of
// `cap` slots. Per (sequence b, KV head h), in this order:
//  1. the slot fresh_slot[b][h] (this step's token) starts afresh: score 0, tag fresh_tag;
//  2. scores[t] += exp(logits[g][t] - lse[g]) for t < filled[b], over the query heads g of h in
//     ascending order (a head whose lse is not finite attended nothing and adds nothing);
//  3. victims[b][h] = -1 while filled[b] < cap, else the slot with the lowest score among those
//     whose tag < recent_from (lowest slot on ties; -1 when none qualifies).
struct HeavyHitterArgs {
  int batch = 0, q_heads = 0, kv_heads = 0;
  int64_t cap = 0;
  const float* logits = nullptr;        // [batch][q_heads][cap], scaled (decode_attention's)
  const float* lse = nullptr;           // [batch][q_heads]
  float* scores = nullptr;              // [batch][kv_heads][cap]
  int64_t* tags = nullptr;              // [batch][kv_heads][cap] original positions
  int32_t* victims = nullptr;           // [batch][kv_heads] out
  const int64_t* filled = nullptr;      // host [batch]
  const int64_t* fresh_slot = nullptr;  // host [batch][kv_heads]
  int64_t fresh_tag = 0;
  int64_t recent_from = 0;
};

// Quest's page bound upkeep: for each of `rows` (sequence, KV head) rows, folds the row's new key
// keys[r] into its current page's box (boxes[r] = min[head_dim] then max[head_dim], fp32; `first`
// starts the box afresh) and writes that page's bound, center (max + min) / 2 and radius
// (max - min) / 2 converted to `dtype`, as slot `slot` of the row's metadata blocks c_blocks[r]
// and r_blocks[r] (K-block layout, core/kv_cache.h: dim-major, `block_slots` slots per block).
struct PageBoundFoldArgs {
  int rows = 0, head_dim = 0;
  DType dtype = DType::f16;
  const float* keys = nullptr;  // [rows][head_dim]
  float* boxes = nullptr;       // [rows][2][head_dim]
  bool first = false;
  std::byte* const* c_blocks = nullptr;  // host [rows]
  std::byte* const* r_blocks = nullptr;  // host [rows]
  int block_slots = 0, slot = 0;
};

// Quest's page scores: for each sequence b and query head h, over the pages p < n_pages of its KV
// head, scores[(b * q_heads + h) * stride + p] = scale * (q_h . c_p + |q_h| . r_p), the upper
// bound of q_h . k over the page's keys, where c_p and r_p are page p's center and radius rows
// in centers[b] / radii[b] (views whose "tokens" are pages; page_tokens = slots per block).
// qabs [batch][q_heads][head_dim] and radius_scores (like scores) are scratch the cpu
// accelerator uses for its two scoring passes. scale <= 0: 1/sqrt(head_dim).
struct PageBoundScoreArgs {
  int batch = 0, q_heads = 0;
  const float* q = nullptr;              // [batch][q_heads][head_dim]
  const PagedKvView* centers = nullptr;  // host [batch]
  const PagedKvView* radii = nullptr;    // host [batch]
  int64_t n_pages = 0;
  float scale = 0;
  float* scores = nullptr;
  int64_t stride = 0;
  float* qabs = nullptr;
  float* radius_scores = nullptr;
};

// The k largest values of each of `rows` rows of n (row stride `stride`), as indices in
// ascending order into idx_out [rows][k] (cpu::topk_select_rows' contract: larger first, ties
// at the threshold by lower index, NaN ranked as -inf, -0 equal to +0). k is clamped to [0, n].
struct TopkRowsArgs {
  const float* values = nullptr;
  int rows = 0;
  int64_t n = 0, stride = 0, k = 0;
  int32_t* idx_out = nullptr;
};

// out[r][t] = max over g < group of in[r * group + g][t] (ascending g, std::max), t < n, for the
// rows / group output rows; with `counts`, counts[r] = how many of out[r][0..n) are within alpha of
// the row's maximum (v > max - alpha, or v == max): InfiniGen's speculation threshold.
struct GroupMaxArgs {
  const float* in = nullptr;
  int rows = 0, group = 1;
  int64_t n = 0, stride = 0;
  float* out = nullptr;
  int64_t out_stride = 0;
  float alpha = 0;
  int32_t* counts = nullptr;  // [rows / group] or null
};

// out[r][c] = sum over i < dim (ascending) of x[r][i] * proj[r / rows_per_proj][i][c] for c < cols
// and 0 for cols <= c < out_width: InfiniGen's partial queries and keys in the skewed basis.
// proj is [rows / rows_per_proj][dim][out_width]; x rows are x_stride floats apart; out is
// [rows][out_width].
struct ProjectRowsArgs {
  const float* x = nullptr;
  int64_t x_stride = 0;
  int rows = 0, dim = 0, rows_per_proj = 1, cols = 0, out_width = 0;
  const float* proj = nullptr;
  float* out = nullptr;
};

// Token rows into paged blocks (core/kv_cache.h layout: K block [width][page_tokens], V block
// [page_tokens][width], consecutive blocks of page_tokens * width elements), for each of `groups`
// groups: rows i < count of group g go to slot first_slot + i of the blocks at
// k_dst + g * dst_stride (and v_dst + g * dst_stride; v may be null for key-only pages). Source
// rows are fp32 (src_f32, converted to `dtype`) or already in `dtype`, [groups][count][width],
// group g's rows at byte offset g * src_stride. With zero_tail, the slots after the last row up
// to the end of its page are zeroed (kernels may read whole blocks).
struct RowsToPagesArgs {
  int groups = 0, width = 0, page_tokens = 0;
  int64_t count = 0, first_slot = 0;
  DType dtype = DType::f16;
  bool src_f32 = true, zero_tail = false;
  const void* k_src = nullptr;
  const void* v_src = nullptr;
  size_t src_stride = 0;
  std::byte* k_dst = nullptr;
  std::byte* v_dst = nullptr;
  size_t dst_stride = 0;
};

}  // namespace hb
