#pragma once
// The arguments of the attention operations every accelerator and the CPU engine run
// (core/accelerator.h, kernels/cpu): plain structs, so the core's interface is written in its
// own vocabulary and each backend reads the same contract.
#include <cstdint>

#include "core/dtype.h"
#include "core/kv_cache.h"

namespace hb {

// Decode attention (one query token per sequence) over the paged KV cache, returning the
// partial state (o, lse) in fp32 so partials over disjoint token sets merge exactly.
// Contract:
//  * q is fp32 [q_heads][head_dim], unscaled; the kernel multiplies logits by `scale`.
//  * Tokens [token_begin, token_end) of every KV head are attended (token_end < 0 = all of
//    each head's tokens; ranges are clamped to each head's num_tokens).
//  * GQA: each KV row is loaded once for all q_heads/kv_heads query heads that share it.
//  * Output o [q_heads][head_dim]; lse [q_heads] natural-log of sum exp(scale*q.k).
//    An empty range gives o = 0 and lse = -inf (neutral in merge_partials).
//  * If logits_out is set, the scaled logits are also written: logits_out[h*logits_stride + i]
//    for the i-th attended token of query head h (H2O derives probabilities exp(logit - lse)).
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

// One softmax over [external logits | local logits] per query head, weighted sum over
// [external V rows | local V]:
//   ext_logits [q_heads][n_ext] (already scaled), ext_v [q_heads][n_ext][head_dim] in ext_dtype,
//   local: tokens [0, num_tokens) of each head of `local` (may be empty).
// Shared external rows (ext_rows set): consecutive groups of `ext_group` query heads share one
// block of `ext_block_rows` V rows, ext_v [q_heads / ext_group][ext_block_rows][head_dim], and
// entry i of query head h reads row ext_rows[h * n_ext + i] of its group's block. A GQA group
// that selected the same token ships its V row once (HybridGen, hybrid/README.md).
// Output o [q_heads][head_dim], lse [q_heads]. With all tokens supplied this is exact.
// (One softmax over the union equals the LSE merge of the two sides' partials, which is how
// it is computed: the local side runs on the decode-attention engine.)
struct LogitMergeArgs {
  const float* q = nullptr;
  int q_heads = 0;
  float scale = 0;
  const float* ext_logits = nullptr;
  const void* ext_v = nullptr;
  DType ext_dtype = DType::f16;
  int64_t n_ext = 0;
  const int32_t* ext_rows = nullptr;  // null: dense rows, one block per query head
  int ext_group = 1;
  int64_t ext_block_rows = 0;
  PagedKvView local;
  float* o = nullptr;
  float* lse = nullptr;
};

}  // namespace hb
