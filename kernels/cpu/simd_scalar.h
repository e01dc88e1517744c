#pragma once
// Portable one-lane traits for engine.h: the fallback for CPUs without AVX2+FMA+F16C and for
// head widths the vector paths do not cover. Same algorithm, so it is tested the same way.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/dtype.h"

namespace hb::cpu {
namespace {

struct Scalar {
  using F = float;
  static constexpr int W = 1;
  static constexpr int kTileSubs = 1;
  static constexpr int kVChunk = 8;

  static F zero() { return 0.0f; }
  static F set1(float x) { return x; }
  static F load(const float* p) { return *p; }
  static void store(float* p, F x) { *p = x; }
  static F fmadd(F a, F b, F c) { return a * b + c; }
  static F mul(F a, F b) { return a * b; }
  static F add(F a, F b) { return a + b; }
  static F max(F a, F b) { return a > b ? a : b; }
  static float hmax(F x) { return x; }
  static unsigned gt_mask(F x, F t) { return x > t ? 1u : 0u; }  // NaN: 0
  static float hsum(F x) { return x; }
  static F mask_outside(F x, int first, int lo, int hi) {
    return first >= lo && first < hi ? x : -__builtin_inff();
  }
  static F exp(F x) { return x >= -87.33654f ? __builtin_expf(x) : 0.0f; }

  static float bits_to_float(uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  // fp16 -> fp32 without a call or branch on the common path (inlined, so the compiler can
  // vectorise the 16-token loops): exponent and mantissa shifted into place and rescaled by
  // 2^112 is exact for normal and subnormal halves; inf/NaN are patched.
  static float half_to_float(uint16_t h) {
    const uint32_t em = h & 0x7fffu;
    float f = bits_to_float(em << 13) * 0x1p112f;
    if (em >= 0x7c00u) f = bits_to_float(0x7f800000u | (em & 0x3ffu) << 13);
    return (h & 0x8000u) ? -f : f;
  }

  template <DType T>
  static F load_kv(const std::byte* p) {
    uint16_t h;
    if constexpr (T == DType::f32) {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    } else if constexpr (T == DType::f16) {
      std::memcpy(&h, p, 2);
      return half_to_float(h);
    } else {
      std::memcpy(&h, p, 2);
      return bits_to_float(static_cast<uint32_t>(h) << 16);
    }
  }

  static void prefetch(const void* p) { __builtin_prefetch(p); }

  static uint64_t stream(const void* p, size_t bytes) {
    const auto* w = static_cast<const uint64_t*>(p);
    uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    for (size_t i = 0; i + 4 <= bytes / 8; i += 4) {
      a0 ^= w[i];
      a1 ^= w[i + 1];
      a2 ^= w[i + 2];
      a3 ^= w[i + 3];
    }
    return a0 ^ a1 ^ a2 ^ a3;
  }

  // Plain stores: the portable path has no non-temporal store (the vector paths do).
  static void fill(void* p, size_t bytes, uint64_t pattern) {
    auto* w = static_cast<uint64_t*>(p);
    for (size_t i = 0; i < bytes / 8; ++i) w[i] = pattern;
  }
  static void copy(void* dst, const void* src, size_t bytes) { std::memcpy(dst, src, bytes); }
};

}  // namespace
}  // namespace hb::cpu
