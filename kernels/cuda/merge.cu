// LSE merge kernels: split partials of one launch into each sequence's output, and
// caller-owned partial states (GPU part, CPU part, ...) into one. Both use merge_row below:
//   M = max lse_i;  w_i = exp(lse_i - M);  o = sum w_i o_i / sum w_i;  lse = M + ln sum w_i
// in index order (reproducible), empty partials (lse = -inf) neutral, all-empty -> (0, -inf).
// One warp per row (a (sequence, head) pair); lanes stride over the head dim, so loads of a
// partial's row are coalesced and the whole merge of a batch-64 layer is a few microseconds.
#include <cuda_runtime.h>

#include "kernels/cuda/device_utils.cuh"
#include "kernels/cuda/kernel_args.h"
#include "kernels/cuda/softmax_math.h"

namespace hb::cuda {
namespace {

constexpr int kWarpsPerBlock = 4;

// Parts: part_lse(i) and part_o(i) (pointer to the row's head_dim values) for i < n.
// The output row may alias part 0: every lane reads its own elements before writing them,
// and the lse is written only after all lanes have read every part's lse (__syncwarp).
template <class LseAt, class OAt>
__device__ void merge_row(int n, LseAt part_lse, OAt part_o, int D, float* o_out, float* lse_out) {
  const int lane = threadIdx.x & 31;
  float m = neg_inf();
  for (int i = 0; i < n; ++i) m = fmaxf(m, part_lse(i));
  float wsum = 0.0f;
  for (int i = 0; i < n; ++i) wsum += exp_shifted(part_lse(i), m);
  const float inv = wsum > 0.0f ? 1.0f / wsum : 0.0f;
  for (int j = lane; j < D; j += 32) {
    float acc = 0.0f;
    for (int i = 0; i < n; ++i) {
      const float w = exp_shifted(part_lse(i), m);
      if (w != 0.0f) acc = fmaf(w, part_o(i)[j], acc);  // an empty part's o is never read
    }
    o_out[j] = acc * inv;
  }
  __syncwarp();
  if (lane == 0) *lse_out = finish_lse(m, wsum);
}

__global__ void split_merge_kernel(const SplitMergeLaunch L) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
  if (row >= static_cast<int64_t>(L.batch) * L.q_heads) return;
  const int b = static_cast<int>(row / L.q_heads), h = static_cast<int>(row % L.q_heads);
  const float* lse = L.part_lse + row * L.slots;
  const float* o = L.part_o + row * L.slots * L.head_dim;
  const SeqDesc& S = L.seqs[b];
  merge_row(
      L.slots, [&](int i) { return lse[i]; },
      [&](int i) { return o + static_cast<int64_t>(i) * L.head_dim; }, L.head_dim,
      S.o + static_cast<int64_t>(h) * L.head_dim, S.lse + h);
}

__global__ void parts_merge_kernel(const PartsMergeLaunch L) {
  const int row = blockIdx.x * kWarpsPerBlock + (threadIdx.x >> 5);
  if (row >= L.heads) return;
  const int64_t off = static_cast<int64_t>(row) * L.head_dim;
  merge_row(
      L.n_parts, [&](int i) { return L.lse[i][row]; }, [&](int i) { return L.o[i] + off; },
      L.head_dim, L.o_out + off, L.lse_out + row);
}

}  // namespace

void launch_split_merge(const SplitMergeLaunch& L, void* stream) {
  const int64_t rows = static_cast<int64_t>(L.batch) * L.q_heads;
  const int blocks = static_cast<int>((rows + kWarpsPerBlock - 1) / kWarpsPerBlock);
  if (blocks > 0)
    split_merge_kernel<<<blocks, 32 * kWarpsPerBlock, 0, static_cast<cudaStream_t>(stream)>>>(L);
}

void launch_parts_merge(const PartsMergeLaunch& L, void* stream) {
  const int blocks = (L.heads + kWarpsPerBlock - 1) / kWarpsPerBlock;
  if (blocks > 0)
    parts_merge_kernel<<<blocks, 32 * kWarpsPerBlock, 0, static_cast<cudaStream_t>(stream)>>>(L);
}

}  // namespace hb::cuda
