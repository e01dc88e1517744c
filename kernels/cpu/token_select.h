#pragma once
// Token-level scoring and selection pieces that pruning and selection strategies share:
// accumulating attention probabilities (H2O's heavy-hitter score), a masked arg-min (its
// eviction victim), grouping query-head scores per KV head, and counting the tokens whose
// score lies within a margin of the best (InfiniGen's threshold). Policies stay in baselines/.
#include <cstdint>

#include "core/thread_pool.h"

namespace hb::cpu {

// scores[h * score_stride + t] += sum over the query heads g of KV head h (contiguous groups
// of q_heads / kv_heads) of exp(logits[g * logit_stride + t] - lse[g]), t in [0, n): the
// softmax probability each token received, given the kernel's logits and log-sum-exp.
void accumulate_probabilities(const float* logits, int64_t logit_stride, const float* lse,
                              int q_heads, int kv_heads, int64_t n, float* scores,
                              int64_t score_stride, ThreadPool* pool = nullptr);

// Index of the smallest values[i] among i in [0, n) whose tags[i] < tag_limit (lowest index
// on ties); -1 when no entry qualifies.
int64_t argmin_tagged(const float* values, const int64_t* tags, int64_t n, int64_t tag_limit);

// out[r * out_stride + t] = max over the `group` rows r*group .. r*group+group-1 of
// in[row * stride + t], for t in [0, n) and r in [0, rows / group).
void group_max_rows(const float* in, int rows, int group, int64_t n, int64_t stride, float* out,
                    int64_t out_stride);

// How many of v[0..n) satisfy v[i] > max(v) - alpha (the maximum itself counts).
int64_t count_within(const float* v, int64_t n, float alpha);

}  // namespace hb::cpu
