#include "kernels/reference/attention_ref.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "core/error.h"

namespace hb::ref {

namespace {
double default_scale(const AttentionShape& s, double scale) {
  return scale > 0 ? scale : 1.0 / std::sqrt(static_cast<double>(s.head_dim));
}

constexpr int kBlock = 8;  // tokens whose dot products are summed side by side
// W fp64 lanes, one register of a SIMD level (2 SSE2, 4 AVX2, 8 AVX-512), as a GCC vector: its
// element-wise + and * are the scalar operations lane by lane (GCC left a plain array's chains
// scalar). Exactly the level's width: a wider GCC vector lived on the stack (AVX2 at half speed).
// (A class's typedef: GCC drops the attribute from an alias template.)
template <int W>
struct LanesOf {
  typedef double type __attribute__((vector_size(W * sizeof(double))));
};
template <int W>
using Lanes = typename LanesOf<W>::type;

// A KV head's rows are head_dim elements of every kv_heads * head_dim: one row per 4 KiB page
// for a Llama-8B shape, which the hardware prefetchers (within a page) do not run ahead of. The
// oracle asks for the row kAhead tokens on; no effect on any figure.
constexpr int64_t kAhead = 16;
void prefetch_row(const float* row, int d) {
  for (int j = 0; j < d; j += 64 / static_cast<int>(sizeof(float))) __builtin_prefetch(row + j);
}

// Every head's scaled scores of tokens [0, n) into s [heads][n] and their maxima m [heads].
// kBlock tokens at a time: the block's key rows are widened to fp64 once for the group, token
// minor, so each head's kBlock dot products advance side by side (independent chains the CPU
// overlaps, in vector lanes across tokens). Each dot product is still summed in the
// same order as alone, so the same figures to the bit (no FMA contraction in this build: mul and
// add round as before).
template <int W>
[[gnu::always_inline]] inline void group_scores(const AttentionShape& shape,
                                                const std::vector<int>& heads, const float* q,
                                                const float* k, int64_t n, double scale, double* s,
                                                double* m) {
  const int d = shape.head_dim, kvh = shape.kv_heads, kh = shape.kv_head_of(heads[0]);
  const size_t G = heads.size();
  for (size_t i = 0; i < G; ++i) m[i] = -std::numeric_limits<double>::infinity();
  std::vector<double> block(static_cast<size_t>(d) * kBlock);  // [d][kBlock]
  int64_t t = 0;
  for (; t + kBlock <= n; t += kBlock) {
    for (int u = 0; u < kBlock; ++u) {
      if (t + u + kAhead < n) prefetch_row(k + ((t + u + kAhead) * kvh + kh) * d, d);
      const float* kt = k + ((t + u) * kvh + kh) * d;
      for (int j = 0; j < d; ++j) block[static_cast<size_t>(j) * kBlock + u] = kt[j];
    }
    for (size_t i = 0; i < G; ++i) {
      const float* qh = q + static_cast<size_t>(heads[i]) * d;
      Lanes<W> dot[kBlock / W] = {};
      for (int j = 0; j < d; ++j) {
        const double qj = qh[j];
        const double* kj = block.data() + static_cast<size_t>(j) * kBlock;
        for (int r = 0; r < kBlock / W; ++r) {
          Lanes<W> kr;  // memcpy: the heap block is only 16-byte aligned
          std::memcpy(&kr, kj + r * W, sizeof kr);
          dot[r] += qj * kr;
        }
      }
      double sums[kBlock];
      std::memcpy(sums, dot, sizeof sums);
      for (int u = 0; u < kBlock; ++u) {
        s[i * n + t + u] = sums[u] * scale;
        m[i] = std::max(m[i], s[i * n + t + u]);
      }
    }
  }
  for (; t < n; ++t) {
    const float* kt = k + (t * kvh + kh) * d;
    for (size_t i = 0; i < G; ++i) {
      const float* qh = q + static_cast<size_t>(heads[i]) * d;
      double dot = 0;
      for (int j = 0; j < d; ++j) dot += static_cast<double>(qh[j]) * kt[j];
      s[i * n + t] = dot * scale;
      m[i] = std::max(m[i], s[i * n + t]);
    }
  }
}

// Token by token, as attention_head: each head's unnormalised probabilities (into probs when
// asked), their sums l [heads] and weighted value sums o [heads][d], in the same order. The
// value row is widened to fp64 once for the group (the same products: p * double(v)); the
// compiler vectorises o's update across head_dim, element by element.
[[gnu::always_inline]] inline void group_values(const AttentionShape& shape, int kh, size_t G,
                                                const float* v, int64_t n, const double* s,
                                                const double* m, double* l, double* o,
                                                double* probs) {
  const int d = shape.head_dim, kvh = shape.kv_heads;
  std::vector<double> vd(static_cast<size_t>(d));
  for (int64_t t = 0; t < n; ++t) {
    if (t + kAhead < n) prefetch_row(v + ((t + kAhead) * kvh + kh) * d, d);
    const float* vt = v + (t * kvh + kh) * d;
    for (int j = 0; j < d; ++j) vd[j] = vt[j];
    for (size_t i = 0; i < G; ++i) {
      const double p = std::exp(s[i * n + t] - m[i]);
      l[i] += p;
      if (probs) probs[i * n + t] = p;
      double* oh = o + i * d;
      for (int j = 0; j < d; ++j) oh[j] += p * vd[j];
    }
  }
}

// The two passes once per SIMD level: the same source, inlined into functions the compiler
// may vectorise with that level's registers (8 fp64 lanes on AVX-512, 4 on AVX2, 2 on
// baseline x86-64). Only element-wise operations are vectorised (no sum is reassociated, no
// mul+add contracted: -ffp-contract=off, CMakeLists.txt), so every level gives the same bits.
// A target attribute, not per-file -m flags: code the bodies do not inline (std::vector's, libm)
// stays baseline, so no AVX copy of a shared inline function can reach a generic caller.
struct GroupPasses {
  void (*scores)(const AttentionShape&, const std::vector<int>&, const float*, const float*,
                 int64_t, double, double*, double*);
  void (*values)(const AttentionShape&, int, size_t, const float*, int64_t, const double*,
                 const double*, double*, double*, double*);
};

#define HB_REF_LEVEL(suffix, lanes, target_attr)                                                  \
  target_attr void group_scores_##suffix(                                                         \
      const AttentionShape& shape, const std::vector<int>& heads, const float* q, const float* k, \
      int64_t n, double scale, double* s, double* m) {                                            \
    group_scores<lanes>(shape, heads, q, k, n, scale, s, m);                                      \
  }                                                                                               \
  target_attr void group_values_##suffix(const AttentionShape& shape, int kh, size_t G,           \
                                         const float* v, int64_t n, const double* s,              \
                                         const double* m, double* l, double* o, double* probs) {  \
    group_values(shape, kh, G, v, n, s, m, l, o, probs);                                          \
  }                                                                                               \
  constexpr GroupPasses k##suffix##Passes{group_scores_##suffix, group_values_##suffix};

HB_REF_LEVEL(Scalar, 2, )
HB_REF_LEVEL(Avx2, 4, [[gnu::target("avx2")]])
HB_REF_LEVEL(Avx512, 8, [[gnu::target("avx512f,prefer-vector-width=512")]])
#undef HB_REF_LEVEL

const GroupPasses& passes_for(SimdLevel level) {
  if (static_cast<int>(level) > static_cast<int>(best_simd_level()))
    throw Error(std::string("this CPU cannot run the reference's ") + simd_level_name(level) +
                    " code (best here: " + simd_level_name(best_simd_level()) + ")",
                "ask for a lower SIMD level");
  switch (level) {
    case SimdLevel::avx512:
      return kAvx512Passes;
    case SimdLevel::avx2:
      return kAvx2Passes;
    case SimdLevel::scalar:
      break;
  }
  return kScalarPasses;
}

}  // namespace

void attention_head(const AttentionShape& shape, int q_head, const float* qh, const float* k,
                    const float* v, int64_t n, double* oh, double* lse, double scale) {
  const int d = shape.head_dim, kvh = shape.kv_heads, kh = shape.kv_head_of(q_head);
  scale = default_scale(shape, scale);
  for (int j = 0; j < d; ++j) oh[j] = 0;
  if (n <= 0) {
    *lse = -std::numeric_limits<double>::infinity();
    return;
  }
  std::vector<double> s(static_cast<size_t>(n));
  double m = -std::numeric_limits<double>::infinity();
  for (int64_t t = 0; t < n; ++t) {
    const float* kt = k + (t * kvh + kh) * d;
    double dot = 0;
    for (int j = 0; j < d; ++j) dot += static_cast<double>(qh[j]) * kt[j];
    s[t] = dot * scale;
    m = std::max(m, s[t]);
  }
  double l = 0;
  for (int64_t t = 0; t < n; ++t) {
    const double p = std::exp(s[t] - m);
    l += p;
    const float* vt = v + (t * kvh + kh) * d;
    for (int j = 0; j < d; ++j) oh[j] += p * vt[j];
  }
  for (int j = 0; j < d; ++j) oh[j] /= l;
  *lse = m + std::log(l);
}

void attention_group(const AttentionShape& shape, const std::vector<int>& heads, const float* q,
                     const float* k, const float* v, int64_t n, double* o, double* lse,
                     double* probs, double scale, SimdLevel simd) {
  const int d = shape.head_dim;
  const size_t G = heads.size();
  if (G == 0) return;
  const GroupPasses& passes = passes_for(simd);
  scale = default_scale(shape, scale);
  std::fill(o, o + G * d, 0.0);
  if (n <= 0) {
    std::fill(lse, lse + G, -std::numeric_limits<double>::infinity());
    return;
  }
  // The scores are the size of the context: kept per thread, so a long context's are not
  // faulted in afresh on every call (the runner's reference calls this every step).
  thread_local std::vector<double> s;
  s.resize(std::max(s.size(), G * static_cast<size_t>(n)));
  std::vector<double> m(G), l(G, 0.0);
  passes.scores(shape, heads, q, k, n, scale, s.data(), m.data());
  passes.values(shape, shape.kv_head_of(heads[0]), G, v, n, s.data(), m.data(), l.data(), o, probs);
  for (size_t i = 0; i < G; ++i) {
    for (int j = 0; j < d; ++j) o[i * d + j] /= l[i];
    lse[i] = m[i] + std::log(l[i]);
    if (probs)
      for (int64_t t = 0; t < n; ++t) probs[i * n + t] /= l[i];
  }
}

void attention(const AttentionShape& shape, const float* q, const float* k, const float* v,
               int64_t n, double* o, double* lse, double scale) {
  const int d = shape.head_dim;
  for (int h = 0; h < shape.q_heads; ++h)
    attention_head(shape, h, q + static_cast<size_t>(h) * d, k, v, n,
                   o + static_cast<size_t>(h) * d, lse + h, scale);
}

std::vector<double> probabilities_head(const AttentionShape& shape, int q_head, const float* qh,
                                       const float* k, int64_t n, double scale) {
  const int d = shape.head_dim, kvh = shape.kv_heads, kh = shape.kv_head_of(q_head);
  scale = default_scale(shape, scale);
  std::vector<double> p(static_cast<size_t>(std::max<int64_t>(n, 0)));
  double m = -std::numeric_limits<double>::infinity();
  for (int64_t t = 0; t < n; ++t) {
    const float* kt = k + (t * kvh + kh) * d;
    double dot = 0;
    for (int j = 0; j < d; ++j) dot += static_cast<double>(qh[j]) * kt[j];
    p[t] = dot * scale;
    m = std::max(m, p[t]);
  }
  double l = 0;
  for (int64_t t = 0; t < n; ++t) l += (p[t] = std::exp(p[t] - m));
  for (int64_t t = 0; t < n; ++t) p[t] /= l;
  return p;
}

std::vector<double> probabilities(const AttentionShape& shape, const float* q, const float* k,
                                  int64_t n, double scale) {
  std::vector<double> p;
  p.reserve(static_cast<size_t>(shape.q_heads) * std::max<int64_t>(n, 0));
  for (int h = 0; h < shape.q_heads; ++h) {
    auto ph =
        probabilities_head(shape, h, q + static_cast<size_t>(h) * shape.head_dim, k, n, scale);
    p.insert(p.end(), ph.begin(), ph.end());
  }
  return p;
}

}  // namespace hb::ref
