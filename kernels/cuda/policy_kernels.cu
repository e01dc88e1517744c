// The policy kernels of H2O, Quest and InfiniGen (contracts in core/policy_args.h, launch
// arguments in policy_launch.h). Small kernels: they run once per step over scores, page bounds
// or partial keys, far less data than attention reads, so they favour matching the cpu
// accelerator's arithmetic and tie rules over the last few percent of bandwidth.
#include <cub/block/block_scan.cuh>

#include "kernels/cuda/device_utils.cuh"
#include "kernels/cuda/policy_launch.h"
#include "kernels/cuda/policy_layout.h"

namespace hb::cuda {
namespace {

__device__ __forceinline__ float load_elem(const void* base, int64_t i, KvType t) {
  switch (t) {
    case KvType::f16:
      return __half2float(static_cast<const __half*>(base)[i]);
    case KvType::bf16:
      return __bfloat162float(static_cast<const __nv_bfloat16*>(base)[i]);
    default:
      return static_cast<const float*>(base)[i];
  }
}

// Round to nearest even, as the CPU's convert_from_fp32.
__device__ __forceinline__ void store_elem(void* base, int64_t i, KvType t, float f) {
  switch (t) {
    case KvType::f16:
      static_cast<__half*>(base)[i] = __float2half_rn(f);
      break;
    case KvType::bf16:
      static_cast<__nv_bfloat16*>(base)[i] = __float2bfloat16_rn(f);
      break;
    default:
      static_cast<float*>(base)[i] = f;
  }
}

__device__ __forceinline__ void copy_elem(void* dst, int64_t di, const void* src, int64_t si,
                                          KvType t) {
  if (t == KvType::f32)
    static_cast<float*>(dst)[di] = static_cast<const float*>(src)[si];
  else
    static_cast<uint16_t*>(dst)[di] = static_cast<const uint16_t*>(src)[si];
}

// ---- H2O ---------------------------------------------------------------------------------
// Grid (slot tiles, batch * kv_heads): the fresh slot restarts, then every filled slot adds the
// probabilities of its KV head's query heads in ascending order (the CPU's order).
__global__ void heavy_hitter_scores(HeavyHitterLaunch L) {
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int bh = blockIdx.y, b = bh / L.kv_heads, h = bh % L.kv_heads;
  if (t >= L.cap) return;
  const int64_t at = static_cast<int64_t>(bh) * L.cap + t;
  float s = L.scores[at];
  if (t == L.fresh_slot[bh]) {
    s = 0.0f;
    L.tags[at] = L.fresh_tag;
  }
  if (t < L.filled[b]) {
    const int G = L.q_heads / L.kv_heads;
    for (int g = 0; g < G; ++g) {
      const int qh = h * G + g;
      const float m = L.lse[b * L.q_heads + qh];
      if (!isfinite(m)) continue;
      s += expf(L.logits[(static_cast<int64_t>(b) * L.q_heads + qh) * L.cap + t] - m);
    }
  }
  L.scores[at] = s;
}

// (value, slot) ordered by value, then lower slot; slot -1 is "none yet".
__device__ __forceinline__ bool victim_before(float v, int64_t i, float bv, int64_t bi) {
  return i >= 0 && (bi < 0 || v < bv || (v == bv && i < bi));
}

// One block per (sequence, KV head): the lowest score outside the recent window.
constexpr int kVictimThreads = 256;
__global__ void heavy_hitter_victims(HeavyHitterLaunch L) {
  const int bh = blockIdx.x, b = bh / L.kv_heads;
  __shared__ float sv[kVictimThreads];
  __shared__ int64_t si[kVictimThreads];
  float best = 0;
  int64_t bi = -1;
  const float* s = L.scores + static_cast<int64_t>(bh) * L.cap;
  const int64_t* tag = L.tags + static_cast<int64_t>(bh) * L.cap;
  for (int64_t t = threadIdx.x; t < L.cap; t += kVictimThreads)
    if (tag[t] < L.recent_from && victim_before(s[t], t, best, bi)) best = s[t], bi = t;
  sv[threadIdx.x] = best;
  si[threadIdx.x] = bi;
  __syncthreads();
  for (int w = kVictimThreads / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) {
      const int o = threadIdx.x + w;
      if (victim_before(sv[o], si[o], sv[threadIdx.x], si[threadIdx.x])) {
        sv[threadIdx.x] = sv[o];
        si[threadIdx.x] = si[o];
      }
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) L.victims[bh] = L.filled[b] < L.cap ? -1 : static_cast<int32_t>(si[0]);
}

// ---- Quest -------------------------------------------------------------------------------
// One block per (sequence, KV head) row: fold the new key into the box, write the page bound.
__global__ void bound_fold(BoundFoldLaunch L) {
  const int r = blockIdx.x;
  float* lo = L.boxes + static_cast<int64_t>(r) * 2 * L.head_dim;
  float* hi = lo + L.head_dim;
  for (int j = threadIdx.x; j < L.head_dim; j += blockDim.x) {
    const float k = L.keys[static_cast<int64_t>(r) * L.head_dim + j];
    const float a = L.first ? k : (k < lo[j] ? k : lo[j]);
    const float b = L.first ? k : (hi[j] < k ? k : hi[j]);
    lo[j] = a;
    hi[j] = b;
    const int64_t at = static_cast<int64_t>(j) * L.block_slots + L.slot;
    store_elem(L.c_blocks[r], at, L.dtype, 0.5f * (b + a));
    store_elem(L.r_blocks[r], at, L.dtype, 0.5f * (b - a));
  }
}

// Grid (page tiles, batch * q_heads), a thread per page: scale * (q . c + |q| . r).
constexpr int kBoundThreads = 128;
__global__ void bound_scores(BoundScoreLaunch L) {
  __shared__ float qs[256];
  const int row = blockIdx.y, b = row / L.q_heads, qh = row % L.q_heads;
  const float* q = L.q + static_cast<int64_t>(row) * L.head_dim;
  for (int j = threadIdx.x; j < L.head_dim; j += blockDim.x) qs[j] = q[j];
  __syncthreads();
  const int64_t p = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (p >= L.n_pages) return;
  const int kvh = qh / (L.q_heads / L.kv_heads);
  const int64_t blk = p / L.block_slots;
  const int slot = static_cast<int>(p % L.block_slots);
  const void* c = L.centers[b * L.kv_heads + kvh].pages[blk].k;
  const void* r = L.radii[b * L.kv_heads + kvh].pages[blk].k;
  float acc = 0;
  for (int j = 0; j < L.head_dim; ++j) {
    const int64_t at = static_cast<int64_t>(j) * L.block_slots + slot;
    acc += qs[j] * load_elem(c, at, L.dtype) + fabsf(qs[j]) * load_elem(r, at, L.dtype);
  }
  L.scores[static_cast<int64_t>(row) * L.stride + p] = L.scale * acc;
}

// ---- top-k -------------------------------------------------------------------------------
// One block per row: four radix passes find the k-th largest key (policy_layout.h), then one
// pass in index order takes every larger key and the first `remaining` equal ones, so the
// output is the cpu contract's set in ascending index order.
constexpr int kTopkThreads = 512;
__global__ void topk_rows_kernel(TopkLaunch L) {
  using Scan = cub::BlockScan<int, kTopkThreads>;
  __shared__ typename Scan::TempStorage scan;
  __shared__ uint32_t hist[256];
  __shared__ uint32_t s_prefix;
  __shared__ long long s_remaining;
  const float* v = L.values + static_cast<int64_t>(blockIdx.x) * L.stride;
  int32_t* out = L.idx_out + static_cast<int64_t>(blockIdx.x) * L.k;
  uint32_t prefix = 0;
  int64_t remaining = L.k;
  for (int pass = 0; pass < kTopkPasses; ++pass) {
    for (int i = threadIdx.x; i < 256; i += kTopkThreads) hist[i] = 0;
    __syncthreads();
    const uint32_t mask = topk_mask(pass);
    const int shift = topk_shift(pass);
    for (int64_t t = threadIdx.x; t < L.n; t += kTopkThreads) {
      const uint32_t key = topk_key(v[t]);
      if ((key & mask) == prefix) atomicAdd(&hist[(key >> shift) & 255u], 1u);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      const TopkDigit d = topk_pick_digit(hist, remaining);
      s_prefix = prefix | (d.digit << shift);
      s_remaining = d.remaining;
    }
    __syncthreads();
    prefix = s_prefix;
    remaining = s_remaining;
  }
  int64_t taken = 0, equal_seen = 0;
  for (int64_t base = 0; base < L.n && taken < L.k; base += kTopkThreads) {
    const int64_t t = base + threadIdx.x;
    const uint32_t key = t < L.n ? topk_key(v[t]) : 0u;
    const int eq = t < L.n && key == prefix;
    int eq_rank, eq_total;
    Scan(scan).ExclusiveSum(eq, eq_rank, eq_total);
    __syncthreads();
    const int take = (t < L.n && key > prefix) || (eq && equal_seen + eq_rank < remaining);
    int pos, total;
    Scan(scan).ExclusiveSum(take, pos, total);
    __syncthreads();
    if (take) out[taken + pos] = static_cast<int32_t>(t);
    taken += total;
    equal_seen += eq_total;
  }
}

// ---- InfiniGen ---------------------------------------------------------------------------
// Grid (token tiles, output rows): the max over the group's rows, in ascending order.
__global__ void group_max_kernel(GroupMaxLaunch L) {
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= L.n) return;
  const int r = blockIdx.y;
  const float* in = L.in + static_cast<int64_t>(r) * L.group * L.stride;
  float m = in[t];
  for (int g = 1; g < L.group; ++g) {
    const float x = in[static_cast<int64_t>(g) * L.stride + t];
    m = m < x ? x : m;  // std::max(m, x)
  }
  L.out[static_cast<int64_t>(r) * L.out_stride + t] = m;
}

// One block per output row: its maximum, then how many are within alpha of it.
constexpr int kCountThreads = 256;
__global__ void count_within_kernel(GroupMaxLaunch L) {
  __shared__ float sm[kCountThreads];
  __shared__ int sc[kCountThreads];
  const float* v = L.out + static_cast<int64_t>(blockIdx.x) * L.out_stride;
  float m = -INFINITY;
  for (int64_t t = threadIdx.x; t < L.n; t += kCountThreads) m = m < v[t] ? v[t] : m;
  sm[threadIdx.x] = m;
  __syncthreads();
  for (int w = kCountThreads / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) sm[threadIdx.x] = fmaxf(sm[threadIdx.x], sm[threadIdx.x + w]);
    __syncthreads();
  }
  m = sm[0];
  const float cut = m - L.alpha;
  int c = 0;
  for (int64_t t = threadIdx.x; t < L.n; t += kCountThreads) c += v[t] > cut || v[t] == m;
  sc[threadIdx.x] = c;
  __syncthreads();
  for (int w = kCountThreads / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) sc[threadIdx.x] += sc[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) L.counts[blockIdx.x] = L.n > 0 ? sc[0] : 0;
}

// One block per row, a thread per output column; the sum in ascending i, without FMA, as the
// CPU's loop compiles at the baseline ISA.
__global__ void project_kernel(ProjectLaunch L) {
  const int r = blockIdx.x;
  const float* x = L.x + r * L.x_stride;
  const float* proj = L.proj + static_cast<int64_t>(r / L.rows_per_proj) * L.dim * L.out_width;
  for (int c = threadIdx.x; c < L.out_width; c += blockDim.x) {
    float acc = 0;
    if (c < L.cols)
      for (int i = 0; i < L.dim; ++i)
        acc = __fadd_rn(acc, __fmul_rn(x[i], proj[static_cast<int64_t>(i) * L.out_width + c]));
    L.out[static_cast<int64_t>(r) * L.out_width + c] = acc;
  }
}

// Grid (element tiles, groups): one thread per (slot, dim) written; slots past the rows (the
// page's zeroed tail) get zeros.
__global__ void rows_to_pages_kernel(RowsToPagesLaunch L, int64_t slots) {
  const int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= slots * L.width) return;
  const int64_t i = e / L.width;
  const int j = static_cast<int>(e % L.width);
  const int64_t slot = L.first_slot + i;
  const int64_t g = blockIdx.y;
  const auto* ks = static_cast<const char*>(L.k_src) + g * L.src_stride;
  const auto* vs = L.v_src ? static_cast<const char*>(L.v_src) + g * L.src_stride : nullptr;
  char* kd = static_cast<char*>(L.k_dst) + g * L.dst_stride;
  char* vd = L.v_dst ? static_cast<char*>(L.v_dst) + g * L.dst_stride : nullptr;
  const int64_t ko = paged_k_offset(slot, j, L.page_tokens, L.width);
  const int64_t vo = paged_v_offset(slot, j, L.page_tokens, L.width);
  const int64_t si = i * L.width + j;
  if (i >= L.count) {
    store_elem(kd, ko, L.dtype, 0.0f);
    if (vd) store_elem(vd, vo, L.dtype, 0.0f);
  } else if (L.src_f32) {
    store_elem(kd, ko, L.dtype, reinterpret_cast<const float*>(ks)[si]);
    if (vd) store_elem(vd, vo, L.dtype, reinterpret_cast<const float*>(vs)[si]);
  } else {
    copy_elem(kd, ko, ks, si, L.dtype);
    if (vd) copy_elem(vd, vo, vs, si, L.dtype);
  }
}

unsigned tiles(int64_t n, int threads) {
  return static_cast<unsigned>((n + threads - 1) / threads);
}

}  // namespace

void launch_heavy_hitter(const HeavyHitterLaunch& L, void* stream) {
  if (L.batch <= 0 || L.kv_heads <= 0 || L.cap <= 0) return;
  auto s = static_cast<cudaStream_t>(stream);
  const unsigned rows = static_cast<unsigned>(L.batch * L.kv_heads);
  heavy_hitter_scores<<<dim3(tiles(L.cap, 256), rows), 256, 0, s>>>(L);
  heavy_hitter_victims<<<rows, kVictimThreads, 0, s>>>(L);
}

void launch_bound_fold(const BoundFoldLaunch& L, void* stream) {
  if (L.rows <= 0) return;
  bound_fold<<<L.rows, 128, 0, static_cast<cudaStream_t>(stream)>>>(L);
}

void launch_bound_scores(const BoundScoreLaunch& L, void* stream) {
  if (L.batch <= 0 || L.n_pages <= 0) return;
  const dim3 grid(tiles(L.n_pages, kBoundThreads), static_cast<unsigned>(L.batch * L.q_heads));
  bound_scores<<<grid, kBoundThreads, 0, static_cast<cudaStream_t>(stream)>>>(L);
}

void launch_topk(const TopkLaunch& L, void* stream) {
  if (L.rows <= 0 || L.k <= 0) return;
  topk_rows_kernel<<<L.rows, kTopkThreads, 0, static_cast<cudaStream_t>(stream)>>>(L);
}

void launch_group_max(const GroupMaxLaunch& L, void* stream) {
  const int out_rows = L.group > 0 ? L.rows / L.group : 0;
  if (out_rows <= 0) return;
  auto s = static_cast<cudaStream_t>(stream);
  if (L.n > 0)
    group_max_kernel<<<dim3(tiles(L.n, 256), static_cast<unsigned>(out_rows)), 256, 0, s>>>(L);
  if (L.counts) count_within_kernel<<<out_rows, kCountThreads, 0, s>>>(L);
}

void launch_project(const ProjectLaunch& L, void* stream) {
  if (L.rows <= 0 || L.out_width <= 0) return;
  project_kernel<<<L.rows, 128, 0, static_cast<cudaStream_t>(stream)>>>(L);
}

void launch_rows_to_pages(const RowsToPagesLaunch& L, void* stream) {
  const int64_t end = L.first_slot + L.count;
  const int64_t last =
      L.zero_tail ? (end + L.page_tokens - 1) / L.page_tokens * L.page_tokens : end;
  const int64_t slots = last - L.first_slot;
  if (L.groups <= 0 || slots <= 0 || L.width <= 0) return;
  const dim3 grid(tiles(slots * L.width, 256), static_cast<unsigned>(L.groups));
  rows_to_pages_kernel<<<grid, 256, 0, static_cast<cudaStream_t>(stream)>>>(L, slots);
}

}  // namespace hb::cuda
