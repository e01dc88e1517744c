#pragma once
// The pieces of sparse and hybrid attention that strategies share: logit scoring, per-head
// top-k, gathering selected rows, and the logit merge (HybridGen's single softmax over logits
// supplied from elsewhere plus local ones).
#include <atomic>
#include <cstdint>

#include "core/attention_args.h"
#include "core/cpu_features.h"
#include "core/kv_cache.h"
#include "core/thread_pool.h"

namespace hb::cpu {

// logits[h * stride + (t - begin)] = scale * q_h . k_t for t in [begin, end) of q head h's KV
// head. Bandwidth-bound scan of K only (V is not read). scale <= 0: 1/sqrt(head_dim).
// end < 0 means each head's num_tokens; the range is clamped to each head's tokens.
void score_logits(const float* q, int q_heads, const PagedKvView& kv, int64_t begin, int64_t end,
                  float scale, float* logits, int64_t stride, ThreadPool& pool,
                  SimdLevel simd = best_simd_level());

// Fused score + top-k (HybridGen's logit mode, hybrid/README.md): for each query head h the
// min(k[h], n_h) tokens of [begin, n_h) with the largest scaled logits q_h . k_t, with no logit
// array written: the engine's K pass keeps a streaming top-k per query head whose threshold
// rejects most tiles with one compare. Output per head (row stride out_stride): token
// positions in the view (not relative to begin), ascending, and their logits. Exactly the
// selection of score_logits + topk_select_rows (larger first, ties by lower index, NaN ranked
// as -inf so never ahead of a finite value), bit-identical logits. Tokens are split over the
// pool (a few pieces per worker) and the pieces' candidates merged per head.
// floor_hint (optional, [q_heads]): a guess at each head's k-th logit from below (e.g. the last
// decode step's, lowered by a margin); heads start from it instead of from floors sampled over
// the range (which cost a few % of K read twice); used only when every head has a finite one.
// A guess above some head's k-th logit only costs time: the call then runs the sampled pass.
// The result never depends on the hint.
void select_topk(const float* q, int q_heads, const PagedKvView& kv, int64_t begin, float scale,
                 const int64_t* k, int32_t* idx_out, float* val_out, int64_t out_stride,
                 ThreadPool& pool, SimdLevel simd = best_simd_level(),
                 const float* floor_hint = nullptr);

// How many select_topk calls found a sampled floor above some head's k-th logit and ran a
// second pass without floors; how many started from hints, and of those how many found one
// above a head's k-th logit and ran the sampled pass (tests and benchmarks read them).
extern std::atomic<int64_t> g_select_fallbacks;
extern std::atomic<int64_t> g_select_hinted;
extern std::atomic<int64_t> g_select_hint_misses;

// For each of `rows` rows of n values (row stride `stride`): the indices of the k largest,
// ordered by value descending; ties broken by lower index first (deterministic). k is
// clamped to [0, n]. NaNs are never selected ahead of numbers. Outputs are [rows][k] with the
// clamped k; val_out may be null.
void topk_rows(const float* values, int rows, int64_t n, int64_t stride, int64_t k,
               int32_t* idx_out, float* val_out, ThreadPool* pool = nullptr);

// Copies V rows (and optionally K rows) of the given tokens of one KV head into dense
// [count][head_dim] buffers in the cache dtype (what crosses the link).
void gather_rows(const PagedKvView& kv, int kv_head, const int32_t* tokens, int64_t count,
                 void* v_out, void* k_out = nullptr);

// The distinct union of `lists` strictly ascending index lists (list i: lists[i * stride ..] with
// counts[i] entries, e.g. one GQA group's top-k rows per query head), ascending, into
// union_out (room for the sum of the counts); slot_out[i * stride + j] = the union position of
// list i's j-th entry. Returns the union's size. A merge, not a sort: O(entries x lists).
int64_t ascending_union(const int32_t* lists, const int64_t* counts, int n_lists, int64_t stride,
                        int32_t* union_out, int32_t* slot_out);

// One softmax over [external logits | local logits] per query head (the contract is at
// LogitMergeArgs in core/attention_args.h); exact when all tokens are supplied.
void logit_merge_attention(const LogitMergeArgs& args, ThreadPool& pool,
                           SimdLevel simd = best_simd_level());

}  // namespace hb::cpu
