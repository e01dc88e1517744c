#pragma once
// AVX2+FMA+F16C vector traits for engine.h. Only kernel_avx2.cpp includes this, and that file
// alone is compiled with -mavx2 -mfma -mf16c (see CMakeLists.txt).
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "core/dtype.h"

namespace hb::cpu {
namespace {

struct Avx2 {
  using F = __m256;
  static constexpr int W = 8;
  static constexpr int kTileSubs =
      1;  // 16 tokens = 2 registers; 4 heads x 2 accumulators already fill the file
  static constexpr int kVChunk = 2;  // 4 heads x 2 accumulators + 2 V registers fit in 16 ymm

  static F zero() { return _mm256_setzero_ps(); }
  static F set1(float x) { return _mm256_set1_ps(x); }
  static F load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, F x) { _mm256_storeu_ps(p, x); }
  static F fmadd(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
  static F mul(F a, F b) { return _mm256_mul_ps(a, b); }
  static F add(F a, F b) { return _mm256_add_ps(a, b); }
  static F max(F a, F b) { return _mm256_max_ps(a, b); }
  // Bit i set when lane i > t (ordered: NaN lanes are never set).
  static unsigned gt_mask(F x, F t) {
    return static_cast<unsigned>(_mm256_movemask_ps(_mm256_cmp_ps(x, t, _CMP_GT_OQ)));
  }
  static float hmax(F x) {
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    return _mm_cvtss_f32(m);
  }
  static float hsum(F x) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }

  static F mask_outside(F x, int first, int lo, int hi) {
    const __m256i idx =
        _mm256_add_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(first));
    const __m256i below = _mm256_cmpgt_epi32(_mm256_set1_epi32(lo), idx);
    const __m256i above = _mm256_cmpgt_epi32(_mm256_set1_epi32(hi), idx);
    const __m256 out =
        _mm256_castsi256_ps(_mm256_or_si256(below, _mm256_xor_si256(above, _mm256_set1_epi32(-1))));
    return _mm256_blendv_ps(x, _mm256_set1_ps(-__builtin_inff()), out);
  }

  // Same polynomial as Avx512::exp; 2^n is built in the exponent field (n in [-126, 127]).
  static F exp(F x) {
    const F lo = _mm256_set1_ps(-87.33654f);
    const F keep = _mm256_cmp_ps(x, lo, _CMP_GE_OQ);
    x = _mm256_max_ps(_mm256_min_ps(x, _mm256_set1_ps(88.0f)), lo);
    const F n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    F r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    F p = _mm256_set1_ps(1.9875691500e-4f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
    p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
    const __m256i e =
        _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_and_ps(_mm256_mul_ps(p, _mm256_castsi256_ps(e)), keep);
  }

  template <DType T>
  static F load_kv(const std::byte* p) {
    if constexpr (T == DType::f32) {
      return _mm256_loadu_ps(reinterpret_cast<const float*>(p));
    } else if constexpr (T == DType::f16) {
      return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    } else {
      const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
      return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
    }
  }

  static void prefetch(const void* p) { _mm_prefetch(static_cast<const char*>(p), _MM_HINT_T0); }

  static uint64_t stream(const void* p, size_t bytes) {
    const auto* v = static_cast<const __m256i*>(p);
    const size_t n = bytes / 32;
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
      a0 = _mm256_xor_si256(a0, _mm256_loadu_si256(v + i));
      a1 = _mm256_xor_si256(a1, _mm256_loadu_si256(v + i + 1));
      a2 = _mm256_xor_si256(a2, _mm256_loadu_si256(v + i + 2));
      a3 = _mm256_xor_si256(a3, _mm256_loadu_si256(v + i + 3));
    }
    for (; i < n; ++i) a0 = _mm256_xor_si256(a0, _mm256_loadu_si256(v + i));
    a0 = _mm256_xor_si256(_mm256_xor_si256(a0, a1), _mm256_xor_si256(a2, a3));
    alignas(32) uint64_t w[4];
    _mm256_store_si256(reinterpret_cast<__m256i*>(w), a0);
    return w[0] ^ w[1] ^ w[2] ^ w[3];
  }

  // Non-temporal stores (no read-for-ownership): p 32-byte aligned, bytes % 64 == 0.
  static void fill(void* p, size_t bytes, uint64_t pattern) {
    auto* v = static_cast<__m256i*>(p);
    const __m256i x = _mm256_set1_epi64x(static_cast<long long>(pattern));
    for (size_t i = 0; i < bytes / 32; ++i) _mm256_stream_si256(v + i, x);
    _mm_sfence();
  }

  // Plain loads, non-temporal stores (STREAM's copy): dst 32-byte aligned, bytes % 64 == 0.
  static void copy(void* dst, const void* src, size_t bytes) {
    auto* d = static_cast<__m256i*>(dst);
    const auto* s = static_cast<const __m256i*>(src);
    for (size_t i = 0; i + 2 <= bytes / 32; i += 2) {
      const __m256i a = _mm256_loadu_si256(s + i), b = _mm256_loadu_si256(s + i + 1);
      _mm256_stream_si256(d + i, a);
      _mm256_stream_si256(d + i + 1, b);
    }
    _mm_sfence();
  }
};

}  // namespace
}  // namespace hb::cpu
