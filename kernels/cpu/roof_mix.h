#pragma once
// The compute roof's loop (compute_roof.h), included by engine.h and so compiled per ISA like
// the engine (anonymous namespace, no library templates: see engine.h).
//
// It is the decode kernel's instruction mix per tile and nothing else: for every K row, the
// loads with their fp16/bf16 conversion, one q broadcast and one FMA per register for each
// query head; per head the softmax's max, horizontal max, vector exp, horizontal sum and the
// weights' store; for every V row the loads with conversion, a weight broadcast and FMAs into
// the output registers. Data sits in L1 (one tile's block, read as K and as V), so nothing
// waits on memory, and it has none of the kernel's masks, prefetches, logit stores, output
// rescale or tile bookkeeping. Its speed is what this core can issue for that mix: the
// ceiling the kernel is judged against where compute, not memory, binds.
#include "kernels/cpu/decode_kernel.h"

namespace hb::cpu {
namespace {

// The V pass over columns [c, c + NV*W) of one tile for HC heads.
template <class V, DType T, int HC, int NV>
inline void roof_v(int d, int c, const std::byte* blk, float* o, const float* p) {
  using F = typename V::F;
  constexpr int N = V::kTileSubs * 16;
  constexpr size_t es = T == DType::f32 ? 4 : 2;
  F acc[HC][NV];
  for (int g = 0; g < HC; ++g)
    for (int v = 0; v < NV; ++v) acc[g][v] = V::load(o + g * d + c + v * V::W);
  for (int t = 0; t < N; ++t) {
    F x[NV];
    for (int v = 0; v < NV; ++v) x[v] = V::template load_kv<T>(blk + (t * d + c + v * V::W) * es);
    for (int g = 0; g < HC; ++g) {
      const F pb = V::set1(p[g * N + t]);
      for (int v = 0; v < NV; ++v) acc[g][v] = V::fmadd(pb, x[v], acc[g][v]);
    }
  }
  for (int g = 0; g < HC; ++g)
    for (int v = 0; v < NV; ++v) V::store(o + g * d + c + v * V::W, acc[g][v]);
}

// One tile for HC heads; o (HC x d floats) accumulates the V pass, p holds the weights.
template <class V, DType T, int HC>
inline void roof_tile(const float* q, int d, const std::byte* blk, float* o, float* p) {
  using F = typename V::F;
  constexpr int N = V::kTileSubs * 16, R = N / V::W, NV = V::kVChunk;
  constexpr size_t es = T == DType::f32 ? 4 : 2;
  F s[HC][R];
  for (int g = 0; g < HC; ++g)
    for (int r = 0; r < R; ++r) s[g][r] = V::zero();
  for (int j = 0; j < d; ++j) {
    F k[R];
    for (int r = 0; r < R; ++r) k[r] = V::template load_kv<T>(blk + (j * N + r * V::W) * es);
    for (int g = 0; g < HC; ++g) {
      const F qb = V::set1(q[g * d + j]);
      for (int r = 0; r < R; ++r) s[g][r] = V::fmadd(qb, k[r], s[g][r]);
    }
  }
  for (int g = 0; g < HC; ++g) {
    F mx = s[g][0];
    for (int r = 1; r < R; ++r) mx = V::max(mx, s[g][r]);
    const F neg_m = V::set1(-V::hmax(mx));
    F sum = V::zero();
    for (int r = 0; r < R; ++r) {
      const F e = V::exp(V::add(s[g][r], neg_m));
      sum = V::add(sum, e);
      V::store(p + g * N + r * V::W, e);
    }
    o[g * d] += V::hsum(sum);  // keeps the sum live, as the kernel's running l
  }
  int c = 0;
  for (; c + NV * V::W <= d; c += NV * V::W) roof_v<V, T, HC, NV>(d, c, blk, o, p);
  for (; c < d; c += V::W) roof_v<V, T, HC, 1>(d, c, blk, o, p);
}

template <class V, DType T>
float roof_tiles(const RoofJob& job) {
  const int d = job.head_dim, G = job.group;
  alignas(64) float p[4 * V::kTileSubs * 16];
  for (int64_t i = 0; i < job.tiles; ++i)
    for (int g0 = 0; g0 < G; g0 += 4) {
      const float* q = job.q + g0 * d;
      float* o = job.o + g0 * d;
      switch (G - g0 < 4 ? G - g0 : 4) {
        case 1:
          roof_tile<V, T, 1>(q, d, job.block, o, p);
          break;
        case 2:
          roof_tile<V, T, 2>(q, d, job.block, o, p);
          break;
        case 3:
          roof_tile<V, T, 3>(q, d, job.block, o, p);
          break;
        default:
          roof_tile<V, T, 4>(q, d, job.block, o, p);
          break;
      }
    }
  return job.o[0];
}

}  // namespace
}  // namespace hb::cpu
