#pragma once
// LSE merge of partial attention states computed over disjoint token sets.
//   M = max lse_i;  w_i = exp(lse_i - M);  o = sum w_i o_i / sum w_i;  lse = M + log sum w_i
// Empty partials (lse = -inf) contribute nothing; all-empty gives o = 0, lse = -inf, never NaN.
// Merge order is fixed (index order) so results are reproducible.
namespace hb::cpu {

// parts: n_parts pointers to o [heads][head_dim] and lse [heads]. In-place output allowed
// (o_out may alias o_parts[0]).
void merge_partials(int n_parts, const float* const* o_parts, const float* const* lse_parts,
                    int heads, int head_dim, float* o_out, float* lse_out);

}  // namespace hb::cpu
