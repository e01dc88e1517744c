#pragma once
// The decode-attention engine, written once over a vector-traits type V (simd_scalar.h,
// simd_avx2.h, simd_avx512.h) and instantiated by each kernel_<isa>.cpp. Everything here is
// in an anonymous namespace on purpose: each ISA file gets its own copy compiled with its own
// -m flags, and no symbol is shared between them. For the same reason this code uses no
// inline library templates (std::min, std::vector...): a weak copy compiled for AVX-512
// could be the one the linker keeps for generic callers.
//
// How it reaches memory bandwidth (see README.md):
//  * Tokens go in sub-blocks of 16 (one AVX-512 register of logits). K is [head_dim][page]
//    token-minor, so q.k for 16 tokens is head_dim broadcast-FMAs into one register per query
//    head: vertical, no horizontal sums.
//  * All query heads of a GQA group use the sub-block while it is in L1 (in chunks of 4 heads
//    for the register budget), so each KV byte comes from DRAM once.
//  * One-pass online softmax: per sub-block and head one horizontal max, a vector exp, and
//    the running output rescaled as it is loaded for the V pass.
//  * V is [page][head_dim]: the weighted sum walks V rows in address order.
//  * Every read is paired with a prefetch of the same offset in the page kPrefetchBytes
//    ahead (pages are separate blocks, so hardware prefetchers lose the stream at each page
//    boundary). The prefetch address is computed, not tracked: a cursor with state in the
//    inner loop made GCC spill the accumulators to the stack every iteration.
#include <cstddef>
#include <cstdint>

#include "core/kv_cache.h"
#include "kernels/cpu/decode_kernel.h"

namespace hb::cpu {
namespace {

constexpr int kSub = 16;                 // tokens per sub-block (page_tokens is a multiple of 16)
constexpr int kHeadChunk = 4;            // query heads sharing the K/V registers of one pass
constexpr size_t kPrefetchBytes = 4096;  // how far ahead of the K (and V) stream to prefetch

template <DType T>
constexpr size_t elem_size() {
  return T == DType::f32 ? 4 : 2;
}

// s[g][n] = sum_j q_g[j] * K[j][token 16*.. + n*W ..] for one sub-block, HC query heads.
// fk: the same sub-block `ahead` pages on, prefetched row by row.
template <class V, DType T, int HC>
inline void k_pass(const float* q, int d, const std::byte* kblk, const std::byte* fk, size_t row_bytes,
                   typename V::F (&s)[HC][kSub / V::W]) {
  using F = typename V::F;
  constexpr int NT = kSub / V::W, S = V::kSplitK;
  constexpr size_t es = elem_size<T>();
  F acc[S][HC][NT];
  for (int u = 0; u < S; ++u)
    for (int g = 0; g < HC; ++g)
      for (int n = 0; n < NT; ++n) acc[u][g][n] = V::zero();
  for (int j = 0; j < d; j += S) {
    for (int u = 0; u < S; ++u) {
      V::prefetch(fk + (j + u) * row_bytes);
      const std::byte* r = kblk + (j + u) * row_bytes;
      F k[NT];
      for (int n = 0; n < NT; ++n) k[n] = V::template load_kv<T>(r + n * V::W * es);
      for (int g = 0; g < HC; ++g) {
        const F qb = V::set1(q[g * d + j + u]);
        for (int n = 0; n < NT; ++n) acc[u][g][n] = V::fmadd(qb, k[n], acc[u][g][n]);
      }
    }
  }
  for (int g = 0; g < HC; ++g)
    for (int n = 0; n < NT; ++n) {
      F x = acc[0][g][n];
      for (int u = 1; u < S; ++u) x = V::add(x, acc[u][g][n]);
      s[g][n] = x;
    }
}

// Scales the logits of a sub-block, masks tokens outside [lo, hi) to -inf and optionally
// stores the valid ones.
template <class V, int HC>
inline void finish_logits(typename V::F (&s)[HC][kSub / V::W], float scale, int lo, int hi, float* out,
                          int64_t stride) {
  constexpr int NT = kSub / V::W;
  const bool partial = lo > 0 || hi < kSub;
  for (int g = 0; g < HC; ++g)
    for (int n = 0; n < NT; ++n) {
      s[g][n] = V::mul(s[g][n], V::set1(scale));
      if (partial) s[g][n] = V::mask_outside(s[g][n], n * V::W, lo, hi);
    }
  if (!out) return;
  for (int g = 0; g < HC; ++g) {
    float tmp[kSub];
    for (int n = 0; n < NT; ++n) V::store(tmp + n * V::W, s[g][n]);
    for (int t = lo; t < hi; ++t) out[g * stride + t] = tmp[t];
  }
}

// Per-job softmax state of every query head of the group; o accumulates in the job's output.
struct SoftmaxState {
  float m[kMaxGroup];  // running max logit
  float l[kMaxGroup];  // running sum of exp(logit - m)
};

// Columns [c, c + NV*W) of o_g = alpha_g * o_g + sum_{t in [lo, hi)} p_g[t] v_t for HC heads.
// fv: the same rows `ahead` pages on, prefetched line by line.
template <class V, DType T, int HC, int NV>
inline void v_chunk(float* o, int d, int c, const std::byte* vblk, const std::byte* fv, int lo, int hi,
                    const float (&p)[HC][kSub], const float (&alpha)[HC]) {
  using F = typename V::F;
  constexpr size_t es = elem_size<T>();
  constexpr size_t chunk_bytes = NV * V::W * es;
  F acc[HC][NV];
  for (int g = 0; g < HC; ++g)
    for (int v = 0; v < NV; ++v) acc[g][v] = V::mul(V::load(o + g * d + c + v * V::W), V::set1(alpha[g]));
  for (int t = lo; t < hi; ++t) {
    const size_t off = (static_cast<size_t>(t) * d + c) * es;
    for (size_t b = 0; b < chunk_bytes; b += 64) V::prefetch(fv + off + b);
    const std::byte* row = vblk + off;
    F x[NV];
    for (int v = 0; v < NV; ++v) x[v] = V::template load_kv<T>(row + v * V::W * es);
    for (int g = 0; g < HC; ++g) {
      const F pb = V::set1(p[g][t]);
      for (int v = 0; v < NV; ++v) acc[g][v] = V::fmadd(pb, x[v], acc[g][v]);
    }
  }
  for (int g = 0; g < HC; ++g)
    for (int v = 0; v < NV; ++v) V::store(o + g * d + c + v * V::W, acc[g][v]);
}

// One sub-block [lo, hi) for query heads g0..g0+HC: logits, online softmax, weighted V sum.
template <class V, DType T, int HC>
inline void attend_sub(const AttendJob& job, int g0, const std::byte* kblk, const std::byte* vblk,
                       const std::byte* fk, const std::byte* fv, int lo, int hi, int64_t tok0, SoftmaxState& st) {
  using F = typename V::F;
  constexpr int NT = kSub / V::W, NV = V::kVChunk;
  constexpr size_t es = elem_size<T>();
  const int d = job.head_dim;
  F s[HC][NT];
  k_pass<V, T, HC>(job.q + g0 * d, d, kblk, fk, job.page_tokens * es, s);
  float* lg = job.logits ? job.logits + g0 * job.logits_stride + (tok0 - job.logits_base) : nullptr;
  finish_logits<V, HC>(s, job.scale, lo, hi, lg, job.logits_stride);

  alignas(64) float p[HC][kSub];
  float alpha[HC];
  for (int g = 0; g < HC; ++g) {
    F mx = s[g][0];
    for (int n = 1; n < NT; ++n) mx = V::max(mx, s[g][n]);
    const float m_old = st.m[g0 + g];
    const float mb = V::hmax(mx);
    const float m_new = mb > m_old ? mb : m_old;
    // The max soon stops moving, so skip the libm call then; 0 on the first sub-block
    // (m_old = -inf), when o is still 0.
    alpha[g] = m_new == m_old ? 1.0f : __builtin_expf(m_old - m_new);
    F sum = V::zero();
    for (int n = 0; n < NT; ++n) {
      const F e = V::exp(V::add(s[g][n], V::set1(-m_new)));
      sum = V::add(sum, e);
      V::store(p[g] + n * V::W, e);
    }
    st.l[g0 + g] = st.l[g0 + g] * alpha[g] + V::hsum(sum);
    st.m[g0 + g] = m_new;
  }

  // o_g = alpha_g * o_g + sum_t p_g[t] v_t, NV registers of every head at a time.
  int c = 0;
  for (; c + NV * V::W <= d; c += NV * V::W) v_chunk<V, T, HC, NV>(job.o + g0 * d, d, c, vblk, fv, lo, hi, p, alpha);
  for (; c < d; c += V::W) v_chunk<V, T, HC, 1>(job.o + g0 * d, d, c, vblk, fv, lo, hi, p, alpha);
}

template <class V, DType T>
inline void attend_sub_heads(const AttendJob& job, int g0, const std::byte* kblk, const std::byte* vblk,
                             const std::byte* fk, const std::byte* fv, int lo, int hi, int64_t tok0,
                             SoftmaxState& st) {
  switch (job.group - g0 < kHeadChunk ? job.group - g0 : kHeadChunk) {
    case 1: return attend_sub<V, T, 1>(job, g0, kblk, vblk, fk, fv, lo, hi, tok0, st);
    case 2: return attend_sub<V, T, 2>(job, g0, kblk, vblk, fk, fv, lo, hi, tok0, st);
    case 3: return attend_sub<V, T, 3>(job, g0, kblk, vblk, fk, fv, lo, hi, tok0, st);
    default: return attend_sub<V, T, 4>(job, g0, kblk, vblk, fk, fv, lo, hi, tok0, st);
  }
}

// Walks the sub-blocks of [begin, end) page by page: fn(k, v, future k, future v, lo, hi, tok0).
// The future blocks are those of the page kPrefetchBytes ahead (at least the next page); at
// the end of the range they are the current ones, so prefetches need no branch.
template <DType T, class Fn>
inline void for_each_sub(const PageRef* pages, int P, int d, int64_t begin, int64_t end, Fn&& fn) {
  constexpr size_t es = elem_size<T>();
  const size_t block = static_cast<size_t>(P) * d * es;
  const int64_t ahead = static_cast<int64_t>((kPrefetchBytes + block - 1) / block);
  for (int64_t pg = begin / P; pg * P < end; ++pg) {
    const PageRef& cur = pages[pg];
    const PageRef& fut = (pg + ahead) * P < end ? pages[pg + ahead] : cur;
    for (int sb = 0; sb < P / kSub; ++sb) {
      const int64_t tok0 = pg * P + sb * kSub;
      const int lo = begin > tok0 ? static_cast<int>(begin - tok0) : 0;
      const int hi = end < tok0 + kSub ? static_cast<int>(end - tok0) : kSub;
      if (lo >= hi) continue;
      const size_t ko = static_cast<size_t>(sb) * kSub * es, vo = static_cast<size_t>(sb) * kSub * d * es;
      fn(cur.k + ko, cur.v + vo, fut.k + ko, fut.v + vo, lo, hi, tok0);
    }
  }
}

template <class V, DType T>
void attend(const AttendJob& job) {
  const int d = job.head_dim, G = job.group;
  SoftmaxState st;
  for (int g = 0; g < G; ++g) {
    st.m[g] = -__builtin_inff();
    st.l[g] = 0;
    for (int j = 0; j < d; ++j) job.o[g * d + j] = 0;
  }
  for_each_sub<T>(job.pages, job.page_tokens, d, job.begin, job.end,
                  [&](const std::byte* kb, const std::byte* vb, const std::byte* fk, const std::byte* fv, int lo,
                      int hi, int64_t tok0) {
                    // Head chunks after the first re-read the sub-block from L1 and prefetch
                    // it (a cheap hit) instead of the future page.
                    for (int g0 = 0; g0 < G; g0 += kHeadChunk)
                      attend_sub_heads<V, T>(job, g0, kb, vb, g0 ? kb : fk, g0 ? vb : fv, lo, hi, tok0, st);
                  });
  for (int g = 0; g < G; ++g) {
    float* o = job.o + g * d;
    if (st.l[g] == 0) {  // no tokens: the neutral partial
      job.lse[g] = -__builtin_inff();
      continue;
    }
    const float inv = 1.0f / st.l[g];
    for (int j = 0; j < d; ++j) o[j] *= inv;
    job.lse[g] = st.m[g] + __builtin_logf(st.l[g]);
  }
}

template <class V, DType T, int HC>
inline void score_sub(const ScoreJob& job, int g0, const std::byte* kblk, const std::byte* fk, int lo, int hi,
                      int64_t tok0) {
  typename V::F s[HC][kSub / V::W];
  k_pass<V, T, HC>(job.q + g0 * job.head_dim, job.head_dim, kblk, fk, job.page_tokens * elem_size<T>(), s);
  finish_logits<V, HC>(s, job.scale, lo, hi, job.logits + g0 * job.logits_stride + (tok0 - job.logits_base),
                       job.logits_stride);
}

template <class V, DType T>
void score(const ScoreJob& job) {
  for_each_sub<T>(job.pages, job.page_tokens, job.head_dim, job.begin, job.end,
                  [&](const std::byte* kb, const std::byte*, const std::byte* fk, const std::byte*, int lo, int hi,
                      int64_t tok0) {
                    for (int g0 = 0; g0 < job.group; g0 += kHeadChunk) {
                      const std::byte* f = g0 ? kb : fk;
                      switch (job.group - g0 < kHeadChunk ? job.group - g0 : kHeadChunk) {
                        case 1: score_sub<V, T, 1>(job, g0, kb, f, lo, hi, tok0); break;
                        case 2: score_sub<V, T, 2>(job, g0, kb, f, lo, hi, tok0); break;
                        case 3: score_sub<V, T, 3>(job, g0, kb, f, lo, hi, tok0); break;
                        default: score_sub<V, T, 4>(job, g0, kb, f, lo, hi, tok0); break;
                      }
                    }
                  });
}

template <class V>
void attend_any(const AttendJob& job) {
  switch (job.dtype) {
    case DType::f32: return attend<V, DType::f32>(job);
    case DType::f16: return attend<V, DType::f16>(job);
    case DType::bf16: return attend<V, DType::bf16>(job);
  }
}

template <class V>
void score_any(const ScoreJob& job) {
  switch (job.dtype) {
    case DType::f32: return score<V, DType::f32>(job);
    case DType::f16: return score<V, DType::f16>(job);
    case DType::bf16: return score<V, DType::bf16>(job);
  }
}

template <class V>
constexpr KernelTable make_table() {
  return KernelTable{&attend_any<V>, &score_any<V>, &V::stream, V::W};
}

}  // namespace
}  // namespace hb::cpu
