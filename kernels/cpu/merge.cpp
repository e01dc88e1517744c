#include "kernels/cpu/merge.h"
#include "kernels/nvtx.h"

#include <cmath>
#include <limits>

namespace hb::cpu {

void merge_partials(int n_parts, const float* const* o_parts, const float* const* lse_parts,
                    int heads, int head_dim, float* o_out, float* lse_out) {
  HB_NVTX_RANGE("hb.cpu.merge_partials");
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  for (int h = 0; h < heads; ++h) {
    float M = kNegInf;
    for (int i = 0; i < n_parts; ++i) M = std::fmax(M, lse_parts[i][h]);  // fmax drops a NaN side
    float* out = o_out + static_cast<size_t>(h) * head_dim;
    if (M == kNegInf) {  // every part empty: the neutral element, not exp(-inf - -inf) = NaN
      for (int j = 0; j < head_dim; ++j) out[j] = 0;
      lse_out[h] = kNegInf;
      continue;
    }
    // Weights first: o_out may alias o_parts[0], so part 0 is read before anything is written.
    float wsum = 0;
    const float w0 = std::exp(lse_parts[0][h] - M);
    wsum += w0;
    const float* o0 = o_parts[0] + static_cast<size_t>(h) * head_dim;
    for (int j = 0; j < head_dim; ++j) out[j] = w0 != 0 ? w0 * o0[j] : 0.0f;
    for (int i = 1; i < n_parts; ++i) {
      const float w = std::exp(lse_parts[i][h] - M);  // exp(-inf) = 0 for an empty part
      if (w == 0) continue;
      wsum += w;
      const float* oi = o_parts[i] + static_cast<size_t>(h) * head_dim;
      for (int j = 0; j < head_dim; ++j) out[j] += w * oi[j];
    }
    const float inv = 1.0f / wsum;  // wsum >= 1: the part holding M has weight 1
    for (int j = 0; j < head_dim; ++j) out[j] *= inv;
    lse_out[h] = M + std::log(wsum);
  }
}

}  // namespace hb::cpu
