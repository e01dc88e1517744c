#pragma once
// CPU decode attention (one query token per sequence) over the paged KV cache, returning the
// partial state (o, lse) in fp32 so partials over disjoint token sets merge exactly.
//
// Contract:
//  * q is fp32 [q_heads][head_dim], unscaled; the kernel multiplies logits by `scale`.
//  * Tokens [token_begin, token_end) of every KV head are attended (token_end < 0 = all of
//    each head's tokens; ranges are clamped to each head's num_tokens).
//  * GQA: each KV row is loaded once for all q_heads/kv_heads query heads that share it.
//  * Output o [q_heads][head_dim]; lse [q_heads] natural-log of sum exp(scale*q.k).
//    An empty range gives o = 0 and lse = -inf (neutral in merge_partials).
//  * If logits_out is set, the scaled logits are also written: logits_out[h*logits_stride + i]
//    for the i-th attended token of query head h (H2O derives probabilities exp(logit - lse)).
#include <cstdint>

#include "core/cpu_features.h"
#include "core/kv_cache.h"
#include "core/thread_pool.h"

namespace hb::cpu {

struct DecodeAttentionArgs {
  const float* q = nullptr;
  PagedKvView kv;
  int q_heads = 0;
  int64_t token_begin = 0;
  int64_t token_end = -1;
  float scale = 0;  // <= 0: 1/sqrt(head_dim)
  float* o = nullptr;
  float* lse = nullptr;
  float* logits_out = nullptr;
  int64_t logits_stride = 0;
};

// Runs `batch` independent sequences; work is split over (sequence, KV head, token split)
// across the pool and split partials are merged before returning.
void decode_attention(const DecodeAttentionArgs* seqs, int batch, ThreadPool& pool,
                      SimdLevel simd = best_simd_level());

// Streaming-read of `bytes` at `p` with the same threads (the bandwidth yardstick the
// attention benchmark is compared against). Returns a checksum so the reads are not elided.
uint64_t stream_read(const void* p, size_t bytes, ThreadPool& pool);

}  // namespace hb::cpu
