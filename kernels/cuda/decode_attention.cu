// Split-KV decode attention over the paged KV cache (one query token per sequence), fp16/bf16
// KV, fp32 accumulation. Also the K-only logit scan (score_logits) as the with_v = false
// instance, so scoring and attention share one loader and one dot-product loop.
//
// Why it is shaped this way (the goal is HBM bandwidth, see README.md):
//  * Grid (split, kv_head x head chunk, sequence): splitting the token range gives enough
//    CTAs to cover every SM even at batch 1; partials are LSE-merged by merge.cu.
//  * GQA: a CTA serves up to 8 query heads of one KV head, so every KV byte is read once.
//  * 64-token tiles stream through a 2-stage shared-memory pipeline with 16-byte cp.async
//    copies (no registers held by in-flight loads, so several CTAs per SM keep ~100 KiB in
//    flight per SM). Copies go in 16-token segments, which never cross a page because
//    page_tokens is a multiple of 16; the K segment rows are 32 contiguous bytes and a V
//    segment is one contiguous run. K rows in shared memory are XOR-swizzled by 16-byte chunk
//    (decode_k_smem_index) so neither the segment stores nor the scoring loads conflict.
//  * Scores: a thread owns 4 tokens x 1/8 of the dims for all heads (q is in shared memory,
//    pre-scaled); the slices are summed by a shuffle and the softmax warps. Softmax: a warp per
//    head, online max/sum in registers, rescale factor shared through shared memory. PV: a thread
//    owns 8 dims (one 16-byte V load) of a token group for all heads.
#include <cuda_runtime.h>

#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/decode_layout.h"
#include "kernels/cuda/device_utils.cuh"
#include "kernels/cuda/kernel_args.h"
#include "kernels/cuda/launch_plan.h"
#include "kernels/cuda/softmax_math.h"

namespace hb::cuda {
namespace {

// The index math (layout, heads, tiles, segments, pages, thread ownership) is in
// decode_layout.h, shared with the host and tested on the CPU.
constexpr int kThreads = kDecodeThreads;
constexpr int kWarps = kDecodeWarps;
constexpr int kTile = kDecodeTile;  // tokens per pipeline stage
constexpr int kSeg = kDecodeSeg;    // tokens per copy segment (never crosses a page)
constexpr int kStages = kDecodeStages;
constexpr int kSlices = kDecodeSlices;
constexpr int kStoredSlices = kDecodeStoredSlices;

// long: one fused kernel: the copy pipeline's stages, the online softmax and the split's partial
// output share registers and shared memory across the token loop; device functions taking that
// state by reference would hide the pipeline's order without saving a line of it.
template <class E, int GMAX, bool WITH_V>
__global__ void __launch_bounds__(kThreads) decode_kernel(const DecodeLaunch L) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int D = L.head_dim, P = L.page_tokens;
  const int b = blockIdx.z;
  const DecodeCtaHeads cta = decode_cta_heads(blockIdx.y, L.head_chunks, L.group, GMAX);
  const int kvh = cta.kv_head;
  const int gn = cta.gn;  // live heads of this CTA; the rest compute zeros
  const int qh0 = cta.qh0;
  const SeqDesc S = L.seqs[b];
  const HeadDesc H = L.heads[static_cast<int64_t>(b) * L.kv_heads + kvh];
  const DecodeSmemLayout lay = decode_layout(D, GMAX, WITH_V, sizeof(E));
  float* qs = reinterpret_cast<float*>(smem + lay.q);  // [D][GMAX], scaled
  E* stages = reinterpret_cast<E*>(smem + lay.stage);  // kStages x (K [D][kTile] swizzled, V)
  float* s_part = reinterpret_cast<float*>(smem + lay.s_part);  // [kStoredSlices][GMAX][kTile]
  float* pm = reinterpret_cast<float*>(smem + lay.p);           // [kTile][GMAX]
  float* alpha_s = reinterpret_cast<float*>(smem + lay.small);  // [GMAX]
  float* lse_s = alpha_s + GMAX;                                // [GMAX]
  float* inv_l_s = lse_s + GMAX;                                // [GMAX]

  // Tokens relative to the first listed page; this CTA's tiles.
  const DecodeCtaTiles tiles =
      decode_cta_tiles(H.base, H.begin, H.end, static_cast<int>(blockIdx.x), L.tiles_per_split);
  const int ntiles = tiles.ntiles;

  for (int i = tid; i < D * GMAX; i += kThreads) {
    const int j = i / GMAX, g = i % GMAX;
    qs[i] = g < gn ? S.q[static_cast<int64_t>(qh0 + g) * D + j] * S.scale : 0.0f;
  }

  // Queues the copies of tile t (0-based within this CTA) into stage `st`; segments outside
  // [tiles.r0, tiles.r1) are zero-filled instead (their pages may not exist, and stale shared
  // memory could hold NaN patterns that 0 * x would propagate).
  auto load_tile = [&](int t, int st) {
    E* ks = stages + st * lay.stage_elems;
    E* vs = ks + D * kTile;
#pragma unroll
    for (int sg = 0; sg < kTile / kSeg; ++sg) {
      const int rs = decode_segment_start(tiles, t, sg);
      if (decode_segment_live(tiles, rs)) {
        const DecodePageSlot ps = decode_page_slot(rs, P, L.page_shift);
        const DevPage pg = H.pages[ps.page];
        const E* kb = static_cast<const E*>(pg.k) + ps.slot;
        for (int c = tid; c < 2 * D; c += kThreads) {
          const DecodeKChunk kc = decode_k_chunk(c);
          cp_async16(ks + decode_k_smem_index(kc.dim, sg * kSeg + kc.h8),
                     kb + static_cast<int64_t>(kc.dim) * P + kc.h8);
        }
        if constexpr (WITH_V) {
          const E* vb = static_cast<const E*>(pg.v) + static_cast<int64_t>(ps.slot) * D;
          E* vd = vs + sg * kSeg * D;
          for (int c = tid; c < 2 * D; c += kThreads) cp_async16(vd + c * 8, vb + c * 8);
        }
      } else {
        const uint4 z = make_uint4(0, 0, 0, 0);
        for (int c = tid; c < 2 * D; c += kThreads) {
          const DecodeKChunk kc = decode_k_chunk(c);
          *reinterpret_cast<uint4*>(ks + decode_k_smem_index(kc.dim, sg * kSeg + kc.h8)) = z;
          if constexpr (WITH_V) *reinterpret_cast<uint4*>(vs + sg * kSeg * D + c * 8) = z;
        }
      }
    }
  };

  constexpr int kHeadsPerWarp = (GMAX + kWarps - 1) / kWarps;
  float m_run[kHeadsPerWarp], l_run[kHeadsPerWarp];
#pragma unroll
  for (int k = 0; k < kHeadsPerWarp; ++k) {
    m_run[k] = neg_inf();
    l_run[k] = 0.0f;
  }
  // PV ownership: 8 dims (`unit`) of every `groups`-th token starting at `tgroup`.
  const DecodePvOwner pv = decode_pv_owner(D, tid);
  const int groups = pv.groups, unit = pv.unit, tgroup = pv.tgroup;
  const bool pv_thread = pv.active;
  float acc[GMAX][8];
#pragma unroll
  for (int g = 0; g < GMAX; ++g)
#pragma unroll
    for (int i = 0; i < 8; ++i) acc[g][i] = 0.0f;

#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < ntiles) load_tile(s, s);
    cp_async_commit();
  }

  for (int t = 0; t < ntiles; ++t) {
    cp_async_wait<kStages - 2>();
    __syncthreads();  // tile t visible to all; everyone is done with the stage reloaded below
    if (t + kStages - 1 < ntiles) load_tile(t + kStages - 1, (t + kStages - 1) % kStages);
    cp_async_commit();
    const E* ks = stages + (t % kStages) * lay.stage_elems;
    const E* vs = ks + D * kTile;

    // 1. Partial q.k over this thread's dim slice for its 4 tokens and all heads.
    {
      const DecodeScoreOwner owner = decode_score_owner(tid);
      const int quad = owner.quad, slice = owner.slice;
      float sc[GMAX][4];
#pragma unroll
      for (int g = 0; g < GMAX; ++g)
#pragma unroll
        for (int i = 0; i < 4; ++i) sc[g][i] = 0.0f;
      for (int j = slice; j < D; j += kSlices) {
        float kf[4], qv[GMAX];
        load4(ks + decode_k_smem_index(j, quad * 4), kf);
        load_row<GMAX>(qs + j * GMAX, qv);
#pragma unroll
        for (int g = 0; g < GMAX; ++g)
#pragma unroll
          for (int i = 0; i < 4; ++i) sc[g][i] = fmaf(qv[g], kf[i], sc[g][i]);
      }
#pragma unroll
      for (int g = 0; g < GMAX; ++g)
#pragma unroll
        for (int i = 0; i < 4; ++i) sc[g][i] += __shfl_xor_sync(0xffffffffu, sc[g][i], 16);
      if (lane < 16) {
#pragma unroll
        for (int g = 0; g < GMAX; ++g)
          *reinterpret_cast<float4*>(s_part + (warp * GMAX + g) * kTile + quad * 4) =
              make_float4(sc[g][0], sc[g][1], sc[g][2], sc[g][3]);
      }
    }
    __syncthreads();

    // 2. Full logits, masking, optional logit output, online softmax (a warp per head).
    const int64_t tile_token = decode_tile_token(H.base, tiles, t, 0);
#pragma unroll
    for (int k = 0; k < kHeadsPerWarp; ++k) {
      const int g = warp + k * kWarps;
      if (g >= GMAX) break;
      float s[2];
#pragma unroll
      for (int u = 0; u < 2; ++u) {
        const int tt = lane + 32 * u;
        float sum = 0.0f;
#pragma unroll
        for (int sl = 0; sl < kStoredSlices; ++sl) sum += s_part[(sl * GMAX + g) * kTile + tt];
        const int64_t tok = tile_token + tt;
        const bool valid = g < gn && tok >= H.begin && tok < H.end;
        if (valid && L.write_logits && S.logits)
          S.logits[static_cast<int64_t>(qh0 + g) * S.logits_stride + (tok - H.logit_origin)] = sum;
        s[u] = valid ? sum : neg_inf();
      }
      if constexpr (WITH_V) {
        const float m_new = fmaxf(m_run[k], warp_max(fmaxf(s[0], s[1])));
        const float a = rescale_factor(m_run[k], m_new);
        const float p0 = exp_shifted(s[0], m_new), p1 = exp_shifted(s[1], m_new);
        l_run[k] = l_run[k] * a + p0 + p1;
        m_run[k] = m_new;
        pm[lane * GMAX + g] = p0;
        pm[(lane + 32) * GMAX + g] = p1;
        if (lane == 0) alpha_s[g] = a;
      }
    }
    if constexpr (!WITH_V) continue;
    __syncthreads();

    // 3. o = o * alpha + sum_t p_t v_t over this thread's dims and token group.
    if (pv_thread) {
#pragma unroll
      for (int g = 0; g < GMAX; ++g) {
        const float a = alpha_s[g];
#pragma unroll
        for (int i = 0; i < 8; ++i) acc[g][i] *= a;
      }
      for (int tt = tgroup; tt < kTile; tt += groups) {
        float p[GMAX], v[8];
        load_row<GMAX>(pm + tt * GMAX, p);
        load8(vs + tt * D + unit * 8, v);
#pragma unroll
        for (int g = 0; g < GMAX; ++g)
#pragma unroll
          for (int i = 0; i < 8; ++i) acc[g][i] = fmaf(p[g], v[i], acc[g][i]);
      }
    }
  }
  cp_async_wait<0>();
  if constexpr (!WITH_V) return;
  __syncthreads();  // the stage buffers become the reduction buffer

  // 4. Finish: lse per head, PV partials summed over token groups, normalised, written.
#pragma unroll
  for (int k = 0; k < kHeadsPerWarp; ++k) {
    const int g = warp + k * kWarps;
    if (g >= GMAX) break;
    const float l = warp_sum(l_run[k]);
    if (lane == 0) {
      lse_s[g] = finish_lse(m_run[k], l);
      inv_l_s[g] = l > 0.0f ? 1.0f / l : 0.0f;
    }
  }
  float* red = reinterpret_cast<float*>(smem + lay.stage);  // [groups][GMAX][D]
  if (pv_thread) {
#pragma unroll
    for (int g = 0; g < GMAX; ++g) {
      float* dst = red + (tgroup * GMAX + g) * D + unit * 8;
      *reinterpret_cast<float4*>(dst) = make_float4(acc[g][0], acc[g][1], acc[g][2], acc[g][3]);
      *reinterpret_cast<float4*>(dst + 4) = make_float4(acc[g][4], acc[g][5], acc[g][6], acc[g][7]);
    }
  }
  __syncthreads();
  const int slot = L.slot_offset + static_cast<int>(blockIdx.x);
  for (int idx = tid; idx < gn * D; idx += kThreads) {
    const int g = idx / D, j = idx - g * D;
    float sum = 0.0f;
    for (int tg = 0; tg < groups; ++tg) sum += red[(tg * GMAX + g) * D + j];
    const float o = sum * inv_l_s[g];
    if (L.direct)
      S.o[static_cast<int64_t>(qh0 + g) * D + j] = o;
    else
      L.part_o[decode_partial_index(b, L.q_heads, qh0 + g, L.slots, slot) * D + j] = o;
  }
  if (tid < gn) {
    if (L.direct)
      S.lse[qh0 + tid] = lse_s[tid];
    else
      L.part_lse[decode_partial_index(b, L.q_heads, qh0 + tid, L.slots, slot)] = lse_s[tid];
  }
}

using KernelFn = void (*)(DecodeLaunch);

template <class E, bool WITH_V>
KernelFn pick_gmax(int gmax) {
  switch (gmax) {
    case 1:
      return decode_kernel<E, 1, WITH_V>;
    case 2:
      return decode_kernel<E, 2, WITH_V>;
    case 4:
      return decode_kernel<E, 4, WITH_V>;
    default:
      return decode_kernel<E, 8, WITH_V>;
  }
}

KernelFn pick(int gmax, bool with_v, KvType dtype) {
  if (dtype == KvType::bf16)
    return with_v ? pick_gmax<__nv_bfloat16, true>(gmax) : pick_gmax<__nv_bfloat16, false>(gmax);
  return with_v ? pick_gmax<__half, true>(gmax) : pick_gmax<__half, false>(gmax);
}

// The device current on this thread (the accelerator activated it): kernel attributes and
// occupancy are per device, so the caches below are keyed by it.
int current_device() {
  int dev = -1;
  HB_CUDA_CHECK(cudaGetDevice(&dev), "current device for a decode launch");
  return dev;
}

// Raises the instance's dynamic shared-memory limit on the current device once to what `bytes`
// needs (beyond the 48 KiB default); concurrent first launches are serialised by the mutex. A
// failure (the device has less opt-in shared memory) throws, and nothing is recorded, so the
// launch never goes ahead with a limit that was not set.
void ensure_smem_limit(KernelFn fn, int bytes) {
  static std::mutex mu;
  static std::map<std::pair<int, KernelFn>, int> limit;
  const int dev = current_device();
  std::lock_guard<std::mutex> lk(mu);
  int& cur = limit[{dev, fn}];
  if (bytes > cur) {
    HB_CUDA_CHECK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes),
                  "decode kernel: " + std::to_string(bytes) + " bytes of shared memory on device " +
                      std::to_string(dev));
    cur = bytes;
  }
}

}  // namespace

void launch_decode(const DecodeLaunch& L, void* stream) {
  const bool with_v = L.with_v != 0;
  const KernelFn fn = pick(L.gmax, with_v, L.dtype);
  const int smem = decode_layout(L.head_dim, L.gmax, with_v, 2).total;
  ensure_smem_limit(fn, smem);
  check_grid(L.splits, int64_t{L.kv_heads} * L.head_chunks, L.batch, "decode_attention");
  const dim3 grid(L.splits, L.kv_heads * L.head_chunks, L.batch);
  fn<<<grid, kThreads, smem, static_cast<cudaStream_t>(stream)>>>(L);
}

// Whether this build has code the current device can run (sm_90 SASS or compute_90 PTX).
cudaError_t probe_kernel_image() {
  cudaFuncAttributes a{};
  return cudaFuncGetAttributes(&a, decode_kernel<__half, 4, true>);
}

int decode_ctas_per_sm(int gmax, bool with_v, KvType dtype, int head_dim) {
  static std::mutex mu;
  static std::map<std::tuple<int, int, bool, int, int>, int> cache;
  const int dev = current_device();
  const auto key = std::make_tuple(dev, gmax, with_v, static_cast<int>(dtype), head_dim);
  {
    std::lock_guard<std::mutex> lk(mu);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  const KernelFn fn = pick(gmax, with_v, dtype);
  const int smem = decode_layout(head_dim, gmax, with_v, 2).total;
  ensure_smem_limit(fn, smem);
  int n = 0;
  HB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, fn, kThreads, smem),
                "decode kernel occupancy on device " + std::to_string(dev));
  n = n > 0 ? n : 1;
  std::lock_guard<std::mutex> lk(mu);
  cache[key] = n;
  return n;
}

}  // namespace hb::cuda
