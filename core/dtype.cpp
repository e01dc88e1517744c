#include "core/dtype.h"

#include <algorithm>
#include <cstring>
#include <immintrin.h>

#include "core/cpu_features.h"
#include "core/error.h"

namespace hb {

size_t dtype_size(DType t) { return t == DType::f32 ? 4 : 2; }

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::f32:
      return "fp32";
    case DType::f16:
      return "fp16";
    case DType::bf16:
      return "bf16";
  }
  return "?";
}

DType parse_dtype(std::string_view s) {
  if (s == "fp32" || s == "f32" || s == "float32") return DType::f32;
  if (s == "fp16" || s == "f16" || s == "float16" || s == "half") return DType::f16;
  if (s == "bf16" || s == "bfloat16") return DType::bf16;
  throw Error("unknown KV dtype '" + std::string(s) + "'", "use one of: fp16, bf16, fp32");
}

static uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
static float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint16_t fp32_to_fp16(float f) {
  const uint32_t x = bits_of(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or NaN; keep NaN quiet and non-zero
    return static_cast<uint16_t>(sign | 0x7c00u |
                                 (abs > 0x7f800000u ? 0x200u | ((abs >> 13) & 0x3ffu) : 0u));
  }
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to >= 65520: inf
  if (abs < 0x38800000u) {  // result is subnormal (or zero) in fp16
    if (abs < 0x33000000u) return static_cast<uint16_t>(sign);  // below half the smallest subnormal
    const uint32_t exp = abs >> 23;
    const uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - exp;  // 14 + (112 - exp) ... places mantissa at 2^-24 units
    const uint32_t half_ulp = 1u << (shift - 1);
    uint32_t r = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1);
    if (rem > half_ulp || (rem == half_ulp && (r & 1u))) ++r;
    return static_cast<uint16_t>(sign | r);
  }
  // Normal: rebias exponent (127 -> 15) and round the 13 dropped mantissa bits to nearest even.
  uint32_t r = (abs - 0x38000000u) >> 13;
  const uint32_t rem = abs & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r;  // may carry into exponent: correct
  return static_cast<uint16_t>(sign | r);
}

float fp16_to_fp32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    if (mant == 0) return float_of(sign);
    // Subnormal: value = mant * 2^-24, exactly representable in fp32.
    float v = static_cast<float>(mant) * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
  if (exp == 31) return float_of(sign | 0x7f800000u | (mant << 13));
  return float_of(sign | ((exp + 112) << 23) | (mant << 13));
}

uint16_t fp32_to_bf16(float f) {
  const uint32_t x = bits_of(f);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  const uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>((x + rounding) >> 16);
}

float bf16_to_fp32(uint16_t h) { return float_of(static_cast<uint32_t>(h) << 16); }

__attribute__((target("avx2,f16c"))) static void fp16_to_fp32_f16c(const uint16_t* s, float* d,
                                                                   size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(d + i,
                     _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i))));
  for (; i < n; ++i) d[i] = fp16_to_fp32(s[i]);
}

__attribute__((target("avx2,f16c"))) static void fp32_to_fp16_f16c(const float* s, uint16_t* d,
                                                                   size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(s + i), _MM_FROUND_TO_NEAREST_INT));
  for (; i < n; ++i) d[i] = fp32_to_fp16(s[i]);
}

void convert_to_fp32(DType t, const void* src, float* dst, size_t n) {
  switch (t) {
    case DType::f32:
      if (n) std::memcpy(dst, src, n * 4);
      return;  // memcpy of a null pointer is UB even for 0 bytes
    case DType::f16: {
      auto* s = static_cast<const uint16_t*>(src);
      if (cpu_features().f16c) return fp16_to_fp32_f16c(s, dst, n);
      for (size_t i = 0; i < n; ++i) dst[i] = fp16_to_fp32(s[i]);
      return;
    }
    case DType::bf16: {
      auto* s = static_cast<const uint16_t*>(src);
      for (size_t i = 0; i < n; ++i) dst[i] = bf16_to_fp32(s[i]);
      return;
    }
  }
}

void convert_from_fp32(DType t, const float* src, void* dst, size_t n) {
  switch (t) {
    case DType::f32:
      if (n) std::memcpy(dst, src, n * 4);
      return;  // memcpy of a null pointer is UB even for 0 bytes
    case DType::f16: {
      auto* d = static_cast<uint16_t*>(dst);
      if (cpu_features().f16c) return fp32_to_fp16_f16c(src, d, n);
      for (size_t i = 0; i < n; ++i) d[i] = fp32_to_fp16(src[i]);
      return;
    }
    case DType::bf16: {
      auto* d = static_cast<uint16_t*>(dst);
      for (size_t i = 0; i < n; ++i) d[i] = fp32_to_bf16(src[i]);
      return;
    }
  }
}

void round_through(DType t, float* v, size_t n) {
  if (t == DType::f16 && cpu_features().f16c) {
    // Through the same conversions the caches use, a block at a time (the scalar pair was a
    // tenth of making a 128k workload; both round to nearest even, so the same values).
    uint16_t h[1024];
    for (size_t i = 0; i < n; i += 1024) {
      const size_t m = std::min<size_t>(1024, n - i);
      fp32_to_fp16_f16c(v + i, h, m);
      fp16_to_fp32_f16c(h, v + i, m);
    }
    return;
  }
  for (size_t i = 0; i < n; ++i) {
    if (t == DType::f16)
      v[i] = fp16_to_fp32(fp32_to_fp16(v[i]));
    else if (t == DType::bf16)
      v[i] = bf16_to_fp32(fp32_to_bf16(v[i]));
  }
}

}  // namespace hb
