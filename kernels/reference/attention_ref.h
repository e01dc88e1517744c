#pragma once
// The fp64 oracle: exact single-query attention, every test and accuracy figure compares
// against it. Deliberately simple (two passes, no reassociated sums) so it is obviously right.
#include <cstdint>
#include <vector>

#include "core/cpu_features.h"
#include "core/kv_cache.h"
#include "core/shape.h"

namespace hb::ref {

// Dense KV rows [n][kv_heads][head_dim] (fp32 values, used exactly). q [q_heads][head_dim].
// o [q_heads][head_dim], lse [q_heads] (natural log, of the scaled logits). With n == 0 the
// output is zero and lse is -inf. `scale` defaults to 1/sqrt(head_dim) when <= 0.
void attention(const AttentionShape& shape, const float* q, const float* k, const float* v,
               int64_t n, double* o, double* lse, double scale = 0);

// One query head (q_row [head_dim]) against the KV head it maps to; o [head_dim], *lse.
void attention_head(const AttentionShape& shape, int q_head, const float* q_row, const float* k,
                    const float* v, int64_t n, double* o, double* lse, double scale = 0);
// attention_head of every query head in `heads` (all of one KV head's group; q [q_heads][d]
// holds every head's row) into o [heads][head_dim] and lse [heads], and with `probs`
// probabilities_head's [heads][n]: the same figures to the bit, from one pass over the keys and
// values for the whole group instead of two per head (the runner's reference at long context).
// `simd` picks the copy of its loops that runs (every level gives the same bits; tests compare
// them); a level this CPU lacks throws hb::Error.
void attention_group(const AttentionShape& shape, const std::vector<int>& heads, const float* q,
                     const float* k, const float* v, int64_t n, double* o, double* lse,
                     double* probs, double scale = 0, SimdLevel simd = best_simd_level());

// Softmax probabilities of every token for every query head: [q_heads][n].
std::vector<double> probabilities(const AttentionShape& shape, const float* q, const float* k,
                                  int64_t n, double scale = 0);

// Probabilities of one query head over n tokens: [n].
std::vector<double> probabilities_head(const AttentionShape& shape, int q_head, const float* q_row,
                                       const float* k, int64_t n, double scale = 0);

}  // namespace hb::ref
