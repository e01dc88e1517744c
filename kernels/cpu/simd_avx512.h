#pragma once
// AVX-512 (F+BW+VL) vector traits for engine.h. Only kernel_avx512.cpp includes this, and
// that file alone is compiled with -mavx512f -mavx512bw -mavx512vl (see CMakeLists.txt).
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "core/dtype.h"

namespace hb::cpu {
namespace {

struct Avx512 {
  using F = __m512;
  static constexpr int W = 16;  // fp32 lanes
  static constexpr int kTileSubs =
      2;  // 32-token tiles: each q broadcast feeds 2 registers of K (4 measured no faster)
  static constexpr int kVChunk = 4;  // 4 heads x 4 registers of output accumulate per V row

  static F zero() { return _mm512_setzero_ps(); }
  static F set1(float x) { return _mm512_set1_ps(x); }
  static F load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, F x) { _mm512_storeu_ps(p, x); }
  static F fmadd(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
  static F mul(F a, F b) { return _mm512_mul_ps(a, b); }
  static F add(F a, F b) { return _mm512_add_ps(a, b); }
  static F max(F a, F b) { return _mm512_max_ps(a, b); }
  static float hmax(F x) { return _mm512_reduce_max_ps(x); }
  // Bit i set when lane i > t (ordered: NaN lanes are never set).
  static unsigned gt_mask(F x, F t) { return _mm512_cmp_ps_mask(x, t, _CMP_GT_OQ); }
  static float hsum(F x) { return _mm512_reduce_add_ps(x); }

  // Lanes whose token index (first + lane) lies outside [lo, hi) become -inf.
  static F mask_outside(F x, int first, int lo, int hi) {
    const int a = lo - first < 0 ? 0 : (lo - first > W ? W : lo - first);
    const int b = hi - first < 0 ? 0 : (hi - first > W ? W : hi - first);
    const __mmask16 in = static_cast<__mmask16>(((1u << b) - 1u) & ~((1u << a) - 1u));
    return _mm512_mask_blend_ps(in, _mm512_set1_ps(-__builtin_inff()), x);
  }

  // exp(x) to ~1 ulp (Cephes polynomial on x - n ln2, then scalef by 2^n); exactly 0 below
  // -87.3, where the true value is a denormal no softmax weight can feel.
  static F exp(F x) {
    const F lo = _mm512_set1_ps(-87.33654f);
    const __mmask16 keep = _mm512_cmp_ps_mask(x, lo, _CMP_GE_OQ);
    x = _mm512_max_ps(_mm512_min_ps(x, _mm512_set1_ps(88.37626f)), lo);
    const F n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    F r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
    F p = _mm512_set1_ps(1.9875691500e-4f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
    p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
    return _mm512_maskz_mov_ps(keep, _mm512_scalef_ps(p, n));
  }

  // W consecutive cache elements as fp32.
  template <DType T>
  static F load_kv(const std::byte* p) {
    if constexpr (T == DType::f32) {
      return _mm512_loadu_ps(p);
    } else if constexpr (T == DType::f16) {
      return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    } else {  // bf16 is the top half of an fp32
      const __m512i w =
          _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
      return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
    }
  }

  static void prefetch(const void* p) { _mm_prefetch(static_cast<const char*>(p), _MM_HINT_T0); }

  // Reads bytes (a multiple of 64) with plain vector loads; xor checksum keeps them alive.
  static uint64_t stream(const void* p, size_t bytes) {
    const auto* v = static_cast<const __m512i*>(p);
    const size_t n = bytes / 64;
    __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
      a0 = _mm512_xor_si512(a0, _mm512_loadu_si512(v + i));
      a1 = _mm512_xor_si512(a1, _mm512_loadu_si512(v + i + 1));
      a2 = _mm512_xor_si512(a2, _mm512_loadu_si512(v + i + 2));
      a3 = _mm512_xor_si512(a3, _mm512_loadu_si512(v + i + 3));
    }
    for (; i < n; ++i) a0 = _mm512_xor_si512(a0, _mm512_loadu_si512(v + i));
    a0 = _mm512_xor_si512(_mm512_xor_si512(a0, a1), _mm512_xor_si512(a2, a3));
    alignas(64) uint64_t w[8];
    _mm512_store_si512(reinterpret_cast<__m512i*>(w), a0);
    return w[0] ^ w[1] ^ w[2] ^ w[3] ^ w[4] ^ w[5] ^ w[6] ^ w[7];
  }

  // Writes bytes (a multiple of 64, p 64-byte aligned) with non-temporal stores: no
  // read-for-ownership, so the memory sees the written bytes once and the figure is the
  // memory's write bandwidth, not half of a read-modify-write.
  static void fill(void* p, size_t bytes, uint64_t pattern) {
    auto* v = static_cast<__m512i*>(p);
    const __m512i x = _mm512_set1_epi64(static_cast<long long>(pattern));
    for (size_t i = 0; i < bytes / 64; ++i) _mm512_stream_si512(v + i, x);
    _mm_sfence();
  }

  // Plain loads, non-temporal stores (STREAM's copy): dst 64-byte aligned, bytes % 64 == 0.
  static void copy(void* dst, const void* src, size_t bytes) {
    auto* d = static_cast<__m512i*>(dst);
    const auto* s = static_cast<const __m512i*>(src);
    size_t i = 0;
    for (; i + 4 <= bytes / 64; i += 4) {
      const __m512i a = _mm512_loadu_si512(s + i), b = _mm512_loadu_si512(s + i + 1),
                    c = _mm512_loadu_si512(s + i + 2), e = _mm512_loadu_si512(s + i + 3);
      _mm512_stream_si512(d + i, a);
      _mm512_stream_si512(d + i + 1, b);
      _mm512_stream_si512(d + i + 2, c);
      _mm512_stream_si512(d + i + 3, e);
    }
    for (; i < bytes / 64; ++i) _mm512_stream_si512(d + i, _mm512_loadu_si512(s + i));
    _mm_sfence();
  }
};

}  // namespace
}  // namespace hb::cpu
