// Gather of selected token rows of one KV head into dense [count][head_dim] buffers in the
// cache dtype (what a selective strategy moves or attends over), and Quest's per-page
// elementwise key min/max. Neither is on the per-step bandwidth-critical path of a dense
// strategy, so they favour simple, obviously-correct indexing over peak bandwidth.
#include <cuda_runtime.h>

#include "kernels/cuda/device_utils.cuh"
#include "kernels/cuda/kernel_args.h"

namespace hb::cuda {
namespace {

constexpr int kThreads = 256;

// One thread per (selected row, 16-bit element). V rows are contiguous in their page, K rows
// are a strided column of the [head_dim][page_tokens] block; out-of-range tokens give zeros.
__global__ void gather_kernel(const GatherLaunch L) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  const int D = L.head_dim;
  if (i >= L.count * D) return;
  const int64_t r = i / D;
  const int j = static_cast<int>(i - r * D);
  const int64_t t = L.tokens[r];
  const bool ok = t >= 0 && t < L.num_tokens;
  const DevPage pg = ok ? L.pages[t / L.page_tokens] : DevPage{nullptr, nullptr};
  const int slot = ok ? static_cast<int>(t % L.page_tokens) : 0;
  const int es = L.elem_bytes;
  auto copy_elem = [&](void* out, const void* block, int64_t elem) {
    char* dst = static_cast<char*>(out) + i * es;
    const char* src = static_cast<const char*>(block) + elem * es;
    if (es == 2)
      *reinterpret_cast<uint16_t*>(dst) = ok ? *reinterpret_cast<const uint16_t*>(src) : 0;
    else
      *reinterpret_cast<uint32_t*>(dst) = ok ? *reinterpret_cast<const uint32_t*>(src) : 0;
  };
  if (L.v_out) copy_elem(L.v_out, pg.v, static_cast<int64_t>(slot) * D + j);
  if (L.k_out) copy_elem(L.k_out, pg.k, static_cast<int64_t>(j) * L.page_tokens + slot);
}

// Block per (page, kv head); thread per dim reads that dim's row of the K block (contiguous
// slots) up to the page's last valid token. Pages past a head's end are left untouched.
template <class E>
__global__ void page_minmax_kernel(const MinMaxLaunch L) {
  const int h = blockIdx.y;
  const int64_t page = blockIdx.x;
  const HeadDesc H = L.heads[h];
  const int64_t n = H.end - H.base;
  const int P = L.page_tokens;
  const int valid = static_cast<int>(min(static_cast<int64_t>(P), n - page * P));
  if (valid <= 0) return;
  const E* kb = static_cast<const E*>(H.pages[page].k);
  float* mn = L.kmin + (static_cast<int64_t>(h) * L.page_stride + page) * L.head_dim;
  float* mx = L.kmax + (static_cast<int64_t>(h) * L.page_stride + page) * L.head_dim;
  for (int j = threadIdx.x; j < L.head_dim; j += blockDim.x) {
    const E* row = kb + static_cast<int64_t>(j) * P;
    float lo = to_f32(row[0]), hi = lo;
    for (int s = 1; s < valid; ++s) {
      const float x = to_f32(row[s]);
      lo = fminf(lo, x);
      hi = fmaxf(hi, x);
    }
    mn[j] = lo;
    mx[j] = hi;
  }
}

}  // namespace

void launch_gather(const GatherLaunch& L, void* stream) {
  const int64_t n = L.count * L.head_dim;
  if (n <= 0) return;
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  gather_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      L);
}

void launch_page_minmax(const MinMaxLaunch& L, int64_t max_pages, void* stream) {
  if (max_pages <= 0 || L.kv_heads <= 0) return;
  const dim3 grid(static_cast<unsigned>(max_pages), L.kv_heads);
  const int threads = L.head_dim < 128 ? 64 : 128;
  auto s = static_cast<cudaStream_t>(stream);
  switch (L.dtype) {
    case KvType::f16:
      page_minmax_kernel<__half><<<grid, threads, 0, s>>>(L);
      break;
    case KvType::bf16:
      page_minmax_kernel<__nv_bfloat16><<<grid, threads, 0, s>>>(L);
      break;
    case KvType::f32:
      page_minmax_kernel<float><<<grid, threads, 0, s>>>(L);
      break;
  }
}

}  // namespace hb::cuda
