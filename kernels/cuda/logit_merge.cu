// The external half of HybridGen's logit merge: a partial softmax state (o, lse) over logits
// and V rows supplied from elsewhere (the CPU's top-k per query head). The accelerator then
// merges it with the partial states of the resident KV (decode_attention.cu) in merge.cu.
// Splitting one softmax into partial states and LSE-merging them is exact (it is how online
// softmax works), so the result equals a single softmax over [external | local] logits.
//
// Grid: x = query head (rows on x: up to 2^31 - 1 of them, where y stops at 65535), y = token
// split; 128 threads. Two passes over the split's logits
// (max, then exp/sum/PV); the logits are 1/(head_dim/2) of the V bytes, so re-reading them is
// cheap. V rows are read with 16-byte loads, a thread owning 8 dims of a token group.
#include <cuda_runtime.h>

#include "kernels/cuda/device_utils.cuh"
#include "kernels/cuda/kernel_args.h"
#include "kernels/cuda/softmax_math.h"

namespace hb::cuda {
namespace {

constexpr int kThreads = 128;

template <class E>
__global__ void __launch_bounds__(kThreads) ext_partial_kernel(const ExtLaunch L) {
  __shared__ __align__(16) float red[1024];  // [groups][D]: groups * D <= 8 * kThreads
  __shared__ float warp_scratch[kThreads / 32];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int D = L.head_dim, qh = blockIdx.x;
  const int64_t t0 = static_cast<int64_t>(blockIdx.y) * L.tokens_per_split;
  const int64_t t1 = min(L.n, t0 + L.tokens_per_split);
  const float* lg = L.logits + static_cast<int64_t>(qh) * L.n;
  const bool shared = L.rows != nullptr;  // a GQA group's rows shipped once (kernel_args.h)
  const E* v =
      static_cast<const E*>(L.v) + (shared ? static_cast<int64_t>(qh / L.group) * L.block_rows
                                           : static_cast<int64_t>(qh) * L.n) *
                                       D;
  const int32_t* at = shared ? L.rows + static_cast<int64_t>(qh) * L.n : nullptr;

  float m = neg_inf();
  for (int64_t t = t0 + tid; t < t1; t += kThreads) m = fmaxf(m, lg[t]);
  m = warp_max(m);
  if (lane == 0) warp_scratch[warp] = m;
  __syncthreads();
  m = warp_scratch[0];
  for (int w = 1; w < kThreads / 32; ++w) m = fmaxf(m, warp_scratch[w]);
  __syncthreads();  // warp_scratch is reused for the sum below

  const int units = D / 8, groups = kThreads / units;
  const int unit = tid % units, tgroup = tid / units;
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  float l = 0.0f;
  if (tgroup < groups) {
    for (int64_t t = t0 + tgroup; t < t1; t += groups) {
      const float p = exp_shifted(lg[t], m);
      if (unit == 0) l += p;  // one thread per token counts it
      if (p == 0.0f) continue;
      float x[8];
      load8(v + (shared ? static_cast<int64_t>(at[t]) : t) * D + unit * 8, x);
#pragma unroll
      for (int i = 0; i < 8; ++i) acc[i] = fmaf(p, x[i], acc[i]);
    }
#pragma unroll
    for (int i = 0; i < 8; ++i) red[tgroup * D + unit * 8 + i] = acc[i];
  }
  l = warp_sum(l);
  if (lane == 0) warp_scratch[warp] = l;
  __syncthreads();
  l = 0.0f;
  for (int w = 0; w < kThreads / 32; ++w) l += warp_scratch[w];
  const float inv = l > 0.0f ? 1.0f / l : 0.0f;
  const int64_t row = qh;
  const int slot = L.slot_offset + static_cast<int>(blockIdx.y);
  for (int j = tid; j < D; j += kThreads) {
    float s = 0.0f;
    for (int g = 0; g < groups; ++g) s += red[g * D + j];
    L.part_o[(row * L.slots + slot) * D + j] = s * inv;
  }
  if (tid == 0) L.part_lse[row * L.slots + slot] = finish_lse(m, l);
}

}  // namespace

void launch_ext_partial(const ExtLaunch& L, void* stream) {
  const dim3 grid(L.q_heads, L.splits);
  auto s = static_cast<cudaStream_t>(stream);
  switch (L.v_dtype) {
    case KvType::f16:
      ext_partial_kernel<__half><<<grid, kThreads, 0, s>>>(L);
      break;
    case KvType::bf16:
      ext_partial_kernel<__nv_bfloat16><<<grid, kThreads, 0, s>>>(L);
      break;
    case KvType::f32:
      ext_partial_kernel<float><<<grid, kThreads, 0, s>>>(L);
      break;
  }
}

}  // namespace hb::cuda
