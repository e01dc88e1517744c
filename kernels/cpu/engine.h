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
//  * A job's KV heads are walked interleaved, tile by tile (decode_kernel.h): a cache filled
//    token by token keeps the heads' pages side by side, so reads advance through memory.
//  * Every read of a tile is paired with a prefetch into the tile kPrefetchTiles later in
//    that order (pages are separate blocks: hardware prefetchers lose the stream at each
//    one). Addresses are computed per tile, not tracked in the inner loops: a cursor with
//    state in the K loop made GCC spill the accumulators every iteration.
#include <cstddef>
#include <cstdint>

#include "core/kv_cache.h"
#include "kernels/cpu/decode_kernel.h"
#include "kernels/cpu/roof_mix.h"

namespace hb::cpu {
namespace {

constexpr int kSub = 16;       // tokens per sub-block (page_tokens is a multiple of 16)
constexpr int kHeadChunk = 4;  // query heads sharing the K/V registers of one pass
// Prefetch distance, in tiles of the processing order: one tile is 16 KiB (AVX-512) or 8 KiB
// of K+V at head_dim 128 fp16, "a few KiB ahead" of each stream.
constexpr int kPrefetchTiles = 1;

template <DType T>
constexpr size_t elem_size() {
  return T == DType::f32 ? 4 : 2;
}

// NS consecutive sub-blocks of one head's range (V::kTileSubs: 2 on AVX-512, so each broadcast
// of q feeds two registers of K). They may sit in different pages. A sub-block past the end of
// the range has lo == hi and aliases sub-block 0 so its (masked) loads stay in bounds.
template <int NS>
struct Tile {
  int head;                     // index into the job's heads
  const std::byte* k[NS];       // K rows of the sub-block: row j at k + j * row_bytes
  const std::byte* kshare[NS];  // the sub-block's share of its page's K block, in address order
  const std::byte* v[NS];       // its 16 V rows (contiguous)
  const std::byte* fk[NS];      // what to prefetch while reading it: the kshare / v of the
  const std::byte* fv[NS];      //   tile processed kPrefetchTiles later
  int lo[NS], hi[NS];           // valid tokens [lo, hi) of the 16
  int64_t tok0[NS];             // token index of slot 0
};

// s[g][n] = sum_j q_g[j] * K[j][n-th register of tokens] for one tile and HC query heads.
// Rows go in pairs so the future K block is prefetched one 64-byte line per pair (fp16/bf16;
// two for fp32) in address order; S accumulator sets keep >= 4 FMA chains in flight when
// few heads share the pass.
template <class V, DType T, int HC, int NS>
inline void k_pass(const float* q, int d, const Tile<NS>& tile, size_t row_bytes,
                   typename V::F (&s)[HC][NS * kSub / V::W]) {
  using F = typename V::F;
  constexpr int NT = kSub / V::W, R = NS * NT;
  constexpr int S = HC * R >= 8 ? 1 : 2;
  constexpr size_t es = elem_size<T>(), pair_bytes = 2 * kSub * es;
  F acc[S][HC][R];
  for (int u = 0; u < S; ++u)
    for (int g = 0; g < HC; ++g)
      for (int r = 0; r < R; ++r) acc[u][g][r] = V::zero();
  auto row = [&](int j, int u) {
    F k[R];
    for (int i = 0; i < NS; ++i)
      for (int n = 0; n < NT; ++n)
        k[i * NT + n] = V::template load_kv<T>(tile.k[i] + j * row_bytes + n * V::W * es);
    for (int g = 0; g < HC; ++g) {
      const F qb = V::set1(q[g * d + j]);
      for (int r = 0; r < R; ++r) acc[u][g][r] = V::fmadd(qb, k[r], acc[u][g][r]);
    }
  };
  const std::byte* fk[NS];
  for (int i = 0; i < NS; ++i) fk[i] = tile.fk[i];
  int j = 0;
  for (; j + 2 <= d; j += 2) {
    for (int i = 0; i < NS; ++i) {
      for (size_t b = 0; b < pair_bytes; b += 64) V::prefetch(fk[i] + b);
      fk[i] += pair_bytes;
    }
    row(j, 0);
    row(j + 1, S - 1);
  }
  if (j < d) row(j, 0);  // odd head_dim (scalar path only)
  for (int g = 0; g < HC; ++g)
    for (int r = 0; r < R; ++r) {
      F x = acc[0][g][r];
      for (int u = 1; u < S; ++u) x = V::add(x, acc[u][g][r]);
      s[g][r] = x;
    }
}

// Scales the logits of a tile, masks tokens outside each sub-block's [lo, hi) to -inf and
// optionally stores the valid ones (out: logits of the tile's first token slot, per head).
template <class V, int HC, int NS>
inline void finish_logits(typename V::F (&s)[HC][NS * kSub / V::W], const Tile<NS>& tile,
                          float scale, float* const* out, int64_t stride) {
  constexpr int NT = kSub / V::W;
  for (int i = 0; i < NS; ++i) {
    const bool partial = tile.lo[i] > 0 || tile.hi[i] < kSub;
    for (int g = 0; g < HC; ++g)
      for (int n = 0; n < NT; ++n) {
        auto& x = s[g][i * NT + n];
        x = V::mul(x, V::set1(scale));
        if (partial) x = V::mask_outside(x, n * V::W, tile.lo[i], tile.hi[i]);
      }
    if (!out) continue;
    for (int g = 0; g < HC; ++g) {
      float tmp[kSub];
      for (int n = 0; n < NT; ++n) V::store(tmp + n * V::W, s[g][i * NT + n]);
      for (int t = tile.lo[i]; t < tile.hi[i]; ++t) out[i][g * stride + t] = tmp[t];
    }
  }
}

// Per-job softmax state of every query head (head-major); o accumulates in the heads' outputs.
struct SoftmaxState {
  float m[kMaxJobQueryHeads];  // running max logit
  float l[kMaxJobQueryHeads];  // running sum of exp(logit - m)
};

// Columns [c, c + NV*W) of o_g = alpha_g * o_g + sum_{t in [lo, hi)} p_g[t] v_t for HC heads
// (p_g at p + g * p_stride); each V read is paired with a prefetch of the same offset in fv,
// the V rows of the tile processed kPrefetchTiles later. One sub-block per call: looping
// over a tile's sub-blocks in here made GCC keep the converted V registers on the stack.
template <class V, DType T, int HC, int NV>
inline void v_chunk(float* o, int d, int c, const std::byte* vblk, const std::byte* fv, int lo,
                    int hi, const float* p, int p_stride, const float (&alpha)[HC]) {
  using F = typename V::F;
  constexpr size_t es = elem_size<T>();
  constexpr size_t chunk_bytes = NV * V::W * es;
  F acc[HC][NV];
  for (int g = 0; g < HC; ++g)
    for (int v = 0; v < NV; ++v)
      acc[g][v] = V::mul(V::load(o + g * d + c + v * V::W), V::set1(alpha[g]));
  for (int t = lo; t < hi; ++t) {
    const size_t off = (static_cast<size_t>(t) * d + c) * es;
    for (size_t b = 0; b < chunk_bytes; b += 64) V::prefetch(fv + off + b);
    const std::byte* row = vblk + off;
    F x[NV];
    for (int v = 0; v < NV; ++v) x[v] = V::template load_kv<T>(row + v * V::W * es);
    for (int g = 0; g < HC; ++g) {
      const F pb = V::set1(p[g * p_stride + t]);
      for (int v = 0; v < NV; ++v) acc[g][v] = V::fmadd(pb, x[v], acc[g][v]);
    }
  }
  for (int g = 0; g < HC; ++g)
    for (int v = 0; v < NV; ++v) V::store(o + g * d + c + v * V::W, acc[g][v]);
}

// One tile for query heads g0..g0+HC: logits, online softmax, weighted V sum.
template <class V, DType T, int HC, int NS>
inline void attend_tile(const DecodeJob& job, const JobHead& hd, int g0, const Tile<NS>& tile,
                        float* m_run, float* l_run) {
  using F = typename V::F;
  constexpr int R = NS * kSub / V::W, NV = V::kVChunk;
  const int d = job.head_dim;
  F s[HC][R];
  k_pass<V, T, HC, NS>(hd.q + g0 * d, d, tile, job.page_tokens * elem_size<T>(), s);
  float* out[NS];
  for (int i = 0; i < NS; ++i)
    out[i] =
        hd.logits ? hd.logits + g0 * job.logits_stride + (tile.tok0[i] - job.logits_base) : nullptr;
  finish_logits<V, HC, NS>(s, tile, job.scale, hd.logits ? out : nullptr, job.logits_stride);

  alignas(64) float p[HC][NS * kSub];
  float alpha[HC];
  for (int g = 0; g < HC; ++g) {
    F mx = s[g][0];
    for (int r = 1; r < R; ++r) mx = V::max(mx, s[g][r]);
    const float m_old = m_run[g0 + g];
    const float mb = V::hmax(mx);
    const float m_new = mb > m_old ? mb : m_old;
    // The max soon stops moving, so skip the libm call then; 0 on the first tile
    // (m_old = -inf), when o is still 0.
    alpha[g] = m_new == m_old ? 1.0f : __builtin_expf(m_old - m_new);
    const F neg_m = V::set1(-m_new);
    F sum = V::zero();
    for (int r = 0; r < R; ++r) {
      const F e = V::exp(V::add(s[g][r], neg_m));
      sum = V::add(sum, e);
      V::store(p[g] + r * V::W, e);
    }
    l_run[g0 + g] = l_run[g0 + g] * alpha[g] + V::hsum(sum);
    m_run[g0 + g] = m_new;
  }

  // o_g = alpha_g * o_g + sum_t p_g[t] v_t, NV registers of every head at a time, one
  // sub-block after the other (the rescale applies once, with the first).
  float one[HC];
  for (int g = 0; g < HC; ++g) one[g] = 1.0f;
  for (int i = 0; i < NS; ++i) {
    if (tile.lo[i] >= tile.hi[i]) continue;
    const float(&a)[HC] = i == 0 ? alpha : one;
    float* o = hd.o + g0 * d;
    int c = 0;
    for (; c + NV * V::W <= d; c += NV * V::W)
      v_chunk<V, T, HC, NV>(o, d, c, tile.v[i], tile.fv[i], tile.lo[i], tile.hi[i], p[0] + i * kSub,
                            NS * kSub, a);
    for (; c < d; c += V::W)
      v_chunk<V, T, HC, 1>(o, d, c, tile.v[i], tile.fv[i], tile.lo[i], tile.hi[i], p[0] + i * kSub,
                           NS * kSub, a);
  }
}

// Page-table entries (16 bytes each) requested ahead of the one being read: two lines.
constexpr int kPageRefAhead = 8;

// Cuts one head's [begin, end) into tiles of NS sub-blocks.
template <DType T, int NS>
struct TileCursor {
  const PageRef* pages;
  int P, d;
  int64_t pos, end;  // next sub-block start (tokens), range end

  bool next(Tile<NS>& tile) {
    constexpr size_t es = elem_size<T>();
    const size_t share = static_cast<size_t>(kSub) * d * es;  // one sub-block's K bytes
    int n = 0;
    for (; n < NS && pos < end; pos = (pos / kSub + 1) * kSub) {
      const PageRef& pg = pages[pos / P];
      // The page table is read one entry per page and head; its misses stalled the address
      // computation of the tile being queued (a tenth of the kernel's samples at 32K, more at
      // 128K, where a cache copy's table is 1 MiB): request the entries two lines ahead (a
      // prefetch past the end of the table cannot fault).
      __builtin_prefetch(&pg + kPageRefAhead);
      const int sb = static_cast<int>(pos % P) / kSub;
      const int64_t tok0 = pos / kSub * kSub;
      tile.k[n] = pg.k + static_cast<size_t>(sb) * kSub * es;
      tile.kshare[n] = pg.k + static_cast<size_t>(sb) * share;
      tile.v[n] = pg.v + static_cast<size_t>(sb) * kSub * d * es;
      tile.lo[n] = static_cast<int>(pos - tok0);
      tile.hi[n] = end < tok0 + kSub ? static_cast<int>(end - tok0) : kSub;
      tile.tok0[n] = tok0;
      ++n;
    }
    for (int i = n; NS > 1 && n > 0 && i < NS; ++i) {  // pad: empty sub-blocks aliasing the first
      tile.k[i] = tile.k[0];
      tile.kshare[i] = tile.kshare[0];
      tile.v[i] = tile.v[0];
      tile.lo[i] = tile.hi[i] = 0;
      tile.tok0[i] = tile.tok0[0];
    }
    return n > 0;
  }
};

// Yields the job's tiles in processing order (heads interleaved at each position), each with
// its prefetch pointers aimed at the tile kPrefetchTiles later in that order (itself at the
// end, so prefetches need no branch).
template <DType T, int NS>
struct TileStream {
  static constexpr int A = kPrefetchTiles;
  TileCursor<T, NS> cur[kMaxJobHeads];
  int heads = 0, turn = 0, live = 0;
  Tile<NS> ring[A + 1];
  int queued = 0;

  TileStream(const DecodeJob& job) : heads(job.heads) {
    for (int h = 0; h < heads; ++h)
      cur[h] = TileCursor<T, NS>{job.head[h].pages, job.page_tokens, job.head_dim, job.begin,
                                 job.head[h].end};
    live = heads;
    while (queued <= A && produce(ring[queued])) ++queued;
  }
  bool produce(Tile<NS>& t) {
    for (int tries = 0; tries < heads && live > 0; ++tries) {
      const int h = turn;
      turn = turn + 1 == heads ? 0 : turn + 1;
      if (cur[h].pos >= cur[h].end) continue;
      if (cur[h].next(t)) {
        t.head = h;
        return true;
      }
    }
    return false;
  }
  bool next(Tile<NS>& out) {
    if (queued == 0) return false;
    out = ring[0];
    const Tile<NS>& fut = ring[queued - 1 < A ? queued - 1 : A];
    for (int i = 0; i < NS; ++i) {
      out.fk[i] = fut.kshare[i];
      out.fv[i] = fut.v[i];
    }
    for (int i = 1; i < queued; ++i) ring[i - 1] = ring[i];
    --queued;
    if (produce(ring[queued])) ++queued;
    return true;
  }
};

template <class V, DType T>
void attend(const DecodeJob& job) {
  constexpr int NS = V::kTileSubs;
  const int d = job.head_dim, G = job.group;
  SoftmaxState st;
  for (int h = 0; h < job.heads; ++h)
    for (int g = 0; g < G; ++g) {
      st.m[h * G + g] = -__builtin_inff();
      st.l[h * G + g] = 0;
      for (int j = 0; j < d; ++j) job.head[h].o[g * d + j] = 0;
    }
  TileStream<T, NS> tiles(job);
  Tile<NS> tile;
  while (tiles.next(tile)) {
    const JobHead& hd = job.head[tile.head];
    // Head chunks after the first re-read the tile from L1 and prefetch it (a cheap hit)
    // instead of the future tile.
    Tile<NS> again = tile;
    for (int i = 0; i < NS; ++i) {
      again.fk[i] = tile.kshare[i];
      again.fv[i] = tile.v[i];
    }
    for (int g0 = 0; g0 < G; g0 += kHeadChunk) {
      const Tile<NS>& t = g0 ? again : tile;
      float* m = st.m + tile.head * G;
      float* l = st.l + tile.head * G;
      switch (G - g0 < kHeadChunk ? G - g0 : kHeadChunk) {
        case 1:
          attend_tile<V, T, 1, NS>(job, hd, g0, t, m, l);
          break;
        case 2:
          attend_tile<V, T, 2, NS>(job, hd, g0, t, m, l);
          break;
        case 3:
          attend_tile<V, T, 3, NS>(job, hd, g0, t, m, l);
          break;
        default:
          attend_tile<V, T, 4, NS>(job, hd, g0, t, m, l);
          break;
      }
    }
  }
  for (int h = 0; h < job.heads; ++h)
    for (int g = 0; g < G; ++g) {
      float* o = job.head[h].o + g * d;
      const float l = st.l[h * G + g];
      if (l == 0) {  // no tokens: the neutral partial
        job.head[h].lse[g] = -__builtin_inff();
        continue;
      }
      const float inv = 1.0f / l;
      for (int j = 0; j < d; ++j) o[j] *= inv;
      job.head[h].lse[g] = st.m[h * G + g] + __builtin_logf(l);
    }
}

template <class V, DType T, int HC, int NS>
inline void score_tile(const DecodeJob& job, const JobHead& hd, int g0, const Tile<NS>& tile) {
  typename V::F s[HC][NS * kSub / V::W];
  k_pass<V, T, HC, NS>(hd.q + g0 * job.head_dim, job.head_dim, tile,
                       job.page_tokens * elem_size<T>(), s);
  float* out[NS];
  for (int i = 0; i < NS; ++i)
    out[i] = hd.logits + g0 * job.logits_stride + (tile.tok0[i] - job.logits_base);
  finish_logits<V, HC, NS>(s, tile, job.scale, out, job.logits_stride);
}

template <class V, DType T>
void score(const DecodeJob& job) {
  constexpr int NS = V::kTileSubs;
  TileStream<T, NS> tiles(job);
  Tile<NS> tile;
  while (tiles.next(tile)) {
    const JobHead& hd = job.head[tile.head];
    Tile<NS> again = tile;
    for (int i = 0; i < NS; ++i) again.fk[i] = tile.kshare[i];
    for (int g0 = 0; g0 < job.group; g0 += kHeadChunk) {
      const Tile<NS>& t = g0 ? again : tile;
      switch (job.group - g0 < kHeadChunk ? job.group - g0 : kHeadChunk) {
        case 1:
          score_tile<V, T, 1, NS>(job, hd, g0, t);
          break;
        case 2:
          score_tile<V, T, 2, NS>(job, hd, g0, t);
          break;
        case 3:
          score_tile<V, T, 3, NS>(job, hd, g0, t);
          break;
        default:
          score_tile<V, T, 4, NS>(job, hd, g0, t);
          break;
      }
    }
  }
}

// Score + streaming top-k of one tile for query heads g0..g0+HC: the logits stay in registers.
// Once a head is full, one compare per register against its threshold rejects the tile (the
// common case) or yields the few lanes above it; until then every valid token is appended.
// Candidates are appended in token order (the driver's compaction keeps that order).
template <class V, DType T, int HC, int NS>
inline void select_tile(const DecodeJob& job, const JobHead& hd, int g0, const Tile<NS>& tile) {
  using F = typename V::F;
  constexpr int NT = kSub / V::W, R = NS * NT;
  F s[HC][R];
  k_pass<V, T, HC, NS>(hd.q + g0 * job.head_dim, job.head_dim, tile,
                       job.page_tokens * elem_size<T>(), s);
  finish_logits<V, HC, NS>(s, tile, job.scale, nullptr, 0);
  for (int g = 0; g < HC; ++g) {
    SelectHead& sh = hd.sel[g0 + g];
    if (sh.full) {
      // Lanes outside the range are -inf and NaN compares false: neither is ever above.
      const F thr = V::set1(sh.thr);
      unsigned m[R];
      unsigned any = 0;
      for (int r = 0; r < R; ++r) {
        m[r] = V::gt_mask(s[g][r], thr);
        any |= m[r];
      }
      if (!any) continue;
      alignas(64) float tmp[R * V::W];
      for (int r = 0; r < R; ++r) V::store(tmp + r * V::W, s[g][r]);
      for (int r = 0; r < R; ++r)
        for (unsigned bits = m[r]; bits; bits &= bits - 1) {
          const int lane = r * V::W + __builtin_ctz(bits);
          // thr may have risen within this tile: keep the order invariant (> thr) exact.
          const float x = tmp[lane];
          if (!(x > sh.thr)) continue;
          sh.cand[sh.count].v = x;
          sh.cand[sh.count].i = static_cast<int32_t>(tile.tok0[lane / kSub] + lane % kSub);
          if (++sh.count == sh.cap) job.compact(sh);
        }
      continue;
    }
    alignas(64) float tmp[R * V::W];
    for (int r = 0; r < R; ++r) V::store(tmp + r * V::W, s[g][r]);
    for (int i = 0; i < NS; ++i)
      for (int t = tile.lo[i]; t < tile.hi[i]; ++t) {
        const float x = tmp[i * kSub + t];
        if (sh.full && !(x > sh.thr)) continue;
        sh.cand[sh.count].v = x;
        sh.cand[sh.count].i = static_cast<int32_t>(tile.tok0[i] + t);
        if (++sh.count == sh.cap) job.compact(sh);
      }
  }
}

template <class V, DType T>
void select(const DecodeJob& job) {
  constexpr int NS = V::kTileSubs;
  TileStream<T, NS> tiles(job);
  Tile<NS> tile;
  while (tiles.next(tile)) {
    const JobHead& hd = job.head[tile.head];
    Tile<NS> again = tile;
    for (int i = 0; i < NS; ++i) again.fk[i] = tile.kshare[i];
    for (int g0 = 0; g0 < job.group; g0 += kHeadChunk) {
      const Tile<NS>& t = g0 ? again : tile;
      switch (job.group - g0 < kHeadChunk ? job.group - g0 : kHeadChunk) {
        case 1:
          select_tile<V, T, 1, NS>(job, hd, g0, t);
          break;
        case 2:
          select_tile<V, T, 2, NS>(job, hd, g0, t);
          break;
        case 3:
          select_tile<V, T, 3, NS>(job, hd, g0, t);
          break;
        default:
          select_tile<V, T, 4, NS>(job, hd, g0, t);
          break;
      }
    }
  }
}

// Columns [c, c + NV*W) of o = sum_i w[i] row_i over the rows with a non-zero weight.
template <class V, DType T, int NV>
inline void rows_chunk(const RowsJob& job, int c, float inv_l) {
  using F = typename V::F;
  constexpr size_t es = elem_size<T>();
  const size_t row_bytes = static_cast<size_t>(job.head_dim) * es;
  F acc[NV];
  for (int v = 0; v < NV; ++v) acc[v] = V::zero();
  for (int64_t i = 0; i < job.n; ++i) {
    const float w = job.weights[i];
    if (w == 0.0f) continue;  // padding may index nothing
    const std::byte* row =
        job.rows + static_cast<size_t>(job.at ? job.at[i] : i) * row_bytes + c * es;
    const F wb = V::set1(w);
    for (int v = 0; v < NV; ++v)
      acc[v] = V::fmadd(wb, V::template load_kv<T>(row + v * V::W * es), acc[v]);
  }
  for (int v = 0; v < NV; ++v) V::store(job.o + c + v * V::W, V::mul(acc[v], V::set1(inv_l)));
}

template <class V, DType T>
void rows(const RowsJob& job) {
  using F = typename V::F;
  const int d = job.head_dim;
  float m = -__builtin_inff();
  for (int64_t i = 0; i < job.n; ++i) m = job.logits[i] > m ? job.logits[i] : m;
  if (job.n == 0 || m == -__builtin_inff()) {
    for (int j = 0; j < d; ++j) job.o[j] = 0;
    *job.lse = -__builtin_inff();
    return;
  }
  // Weights exp(logit - m), W at a time (the attention's exp), then the rows' weighted sum a
  // register block of columns at a time.
  const F neg_m = V::set1(-m);
  F sum = V::zero();
  int64_t i = 0;
  for (; i + V::W <= job.n; i += V::W) {
    const F e = V::exp(V::add(V::load(job.logits + i), neg_m));
    V::store(job.weights + i, e);
    sum = V::add(sum, e);
  }
  float l = V::hsum(sum);
  for (; i < job.n; ++i) {
    const float x = job.logits[i] - m;
    job.weights[i] = x >= -87.33654f ? __builtin_expf(x) : 0.0f;
    l += job.weights[i];
  }
  const float inv_l = 1.0f / l;
  constexpr int NV = 2 * V::kVChunk;
  int c = 0;
  for (; c + NV * V::W <= d; c += NV * V::W) rows_chunk<V, T, NV>(job, c, inv_l);
  for (; c < d; c += V::W) rows_chunk<V, T, 1>(job, c, inv_l);
  *job.lse = m + __builtin_logf(l);
}

// The cache dtype as a type, so one generic lambda can instantiate a kernel for each.
template <DType T>
struct AsDType {
  static constexpr DType value = T;
};

template <class Fn>
void with_dtype(DType t, const Fn& fn) {
  switch (t) {
    case DType::f32:
      return fn(AsDType<DType::f32>{});
    case DType::f16:
      return fn(AsDType<DType::f16>{});
    case DType::bf16:
      return fn(AsDType<DType::bf16>{});
  }
}

template <class V>
void attend_any(const DecodeJob& job) {
  with_dtype(job.dtype, [&](auto t) { attend<V, decltype(t)::value>(job); });
}

template <class V>
void score_any(const DecodeJob& job) {
  with_dtype(job.dtype, [&](auto t) { score<V, decltype(t)::value>(job); });
}

template <class V>
void select_any(const DecodeJob& job) {
  with_dtype(job.dtype, [&](auto t) { select<V, decltype(t)::value>(job); });
}

template <class V>
void rows_any(const RowsJob& job) {
  with_dtype(job.dtype, [&](auto t) { rows<V, decltype(t)::value>(job); });
}

template <class V>
float roof_any(const RoofJob& job) {
  float r = 0;
  with_dtype(job.dtype, [&](auto t) { r = roof_tiles<V, decltype(t)::value>(job); });
  return r;
}

template <class V>
constexpr KernelTable make_table() {
  return KernelTable{&attend_any<V>, &score_any<V>,      &select_any<V>, &rows_any<V>,
                     &V::stream,     &V::fill,           &V::copy,       &roof_any<V>,
                     V::W,           V::kTileSubs * kSub};
}

}  // namespace
}  // namespace hb::cpu
