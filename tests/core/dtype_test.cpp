#include "core/dtype.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "core/cpu_features.h"
#include "core/error.h"
#include "core/rng.h"

namespace hb {
namespace {

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

TEST(Fp16, KnownBitPatterns) {
  EXPECT_EQ(fp32_to_fp16(0.0f), 0x0000);
  EXPECT_EQ(fp32_to_fp16(-0.0f), 0x8000);
  EXPECT_EQ(fp32_to_fp16(1.0f), 0x3c00);
  EXPECT_EQ(fp32_to_fp16(-2.0f), 0xc000);
  EXPECT_EQ(fp32_to_fp16(65504.0f), 0x7bff);  // largest finite
  EXPECT_EQ(fp32_to_fp16(65519.0f), 0x7bff);  // below the tie: stays finite
  EXPECT_EQ(fp32_to_fp16(65520.0f), 0x7c00);  // tie rounds to even: inf
  EXPECT_EQ(fp32_to_fp16(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(fp32_to_fp16(6.103515625e-05f), 0x0400);          // smallest normal 2^-14
  EXPECT_EQ(fp32_to_fp16(5.9604644775390625e-08f), 0x0001);   // smallest subnormal 2^-24
  EXPECT_EQ(fp32_to_fp16(2.98023223876953125e-08f), 0x0000);  // 2^-25: tie to even -> 0
  EXPECT_EQ(fp32_to_fp16(4.4703483581542969e-08f), 0x0001);   // 1.5 * 2^-25 rounds up
  EXPECT_EQ(fp32_to_fp16(0.1f), 0x2e66);
  EXPECT_EQ(fp32_to_fp16(1.0f + 1.0f / 2048), 0x3c00);  // tie between 1 and 1+2^-10: even (down)
  EXPECT_EQ(fp32_to_fp16(1.0f + 3.0f / 2048), 0x3c02);  // tie: rounds up to even
  EXPECT_TRUE(std::isnan(fp16_to_fp32(fp32_to_fp16(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(Fp16, DecodeKnownPatterns) {
  EXPECT_EQ(fp16_to_fp32(0x3c00), 1.0f);
  EXPECT_EQ(fp16_to_fp32(0x7bff), 65504.0f);
  EXPECT_EQ(fp16_to_fp32(0x0001), 5.9604644775390625e-08f);
  EXPECT_EQ(fp16_to_fp32(0x03ff), 6.097555160522461e-05f);
  EXPECT_TRUE(std::isinf(fp16_to_fp32(0xfc00)));
  EXPECT_EQ(bits(fp16_to_fp32(0x8000)), 0x80000000u);
}

TEST(Fp16, RoundTripsEveryHalf) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = fp16_to_fp32(static_cast<uint16_t>(h));
    if (std::isnan(f)) continue;
    ASSERT_EQ(fp32_to_fp16(f), h) << "h=" << h;
  }
}

TEST(Fp16, MatchesF16CHardwareOnRandomValues) {
  if (!cpu_features().f16c) GTEST_SKIP() << "CPU has no F16C";
  Rng rng(7);
  std::vector<float> src(100003);
  for (auto& x : src) x = from_bits(static_cast<uint32_t>(rng.next()));
  std::vector<uint16_t> hw(src.size());
  convert_from_fp32(DType::f16, src.data(), hw.data(), src.size());  // F16C path
  for (size_t i = 0; i < src.size(); ++i) {
    if (std::isnan(src[i])) continue;
    ASSERT_EQ(hw[i], fp32_to_fp16(src[i])) << "value " << src[i];
  }
}

TEST(Bf16, KnownBitPatterns) {
  EXPECT_EQ(fp32_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(fp32_to_bf16(from_bits(0x3f808000u)), 0x3f80);  // tie, even stays
  EXPECT_EQ(fp32_to_bf16(from_bits(0x3f818000u)), 0x3f82);  // tie, odd rounds up
  EXPECT_EQ(fp32_to_bf16(from_bits(0x3f808001u)), 0x3f81);  // above tie
  EXPECT_EQ(fp32_to_bf16(from_bits(0x7f7fffffu)), 0x7f80);  // max float rounds to inf
  EXPECT_TRUE(std::isnan(bf16_to_fp32(fp32_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(bf16_to_fp32(0xc040), -3.0f);
}

TEST(DType, ParseAndErrors) {
  EXPECT_EQ(parse_dtype("fp16"), DType::f16);
  EXPECT_EQ(parse_dtype("bf16"), DType::bf16);
  EXPECT_EQ(parse_dtype("fp32"), DType::f32);
  EXPECT_THROW(parse_dtype("int4"), Error);
  EXPECT_EQ(dtype_size(DType::bf16), 2u);
}

TEST(DType, BulkConversionHandlesOddLengths) {
  for (size_t n : {0, 1, 7, 8, 9, 31}) {
    std::vector<float> src(n), back(n);
    for (size_t i = 0; i < n; ++i) src[i] = 0.37f * static_cast<float>(i) - 1.1f;
    for (DType t : {DType::f16, DType::bf16, DType::f32}) {
      std::vector<uint8_t> buf(n * dtype_size(t) + 1);
      convert_from_fp32(t, src.data(), buf.data(), n);
      convert_to_fp32(t, buf.data(), back.data(), n);
      std::vector<float> want = src;
      round_through(t, want.data(), n);
      for (size_t i = 0; i < n; ++i) EXPECT_EQ(back[i], want[i]);
    }
  }
}

// round_through takes the hardware conversions when the CPU has them: the values must be the
// scalar pair's, to the bit, over every kind of float (halfway cases, fp16 subnormals, overflow).
TEST(DType, RoundThroughIsTheScalarRoundTripToTheBit) {
  std::vector<float> v;
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 65521) {  // a prime stride: every exponent
    float f;
    const auto b = static_cast<uint32_t>(bits);
    std::memcpy(&f, &b, 4);
    if (!std::isnan(f)) v.push_back(f);
  }
  for (float f : {0.0f, -0.0f, 65504.0f, 65520.0f, 6.1e-5f, 5.96e-8f, 2.98e-8f, 1.0009766f})
    v.push_back(f);
  std::vector<float> got = v;
  round_through(DType::f16, got.data(), got.size());
  for (size_t i = 0; i < v.size(); ++i) {
    const float want = fp16_to_fp32(fp32_to_fp16(v[i]));
    uint32_t a, b;
    std::memcpy(&a, &got[i], 4);
    std::memcpy(&b, &want, 4);
    ASSERT_EQ(a, b) << v[i];
  }
}

}  // namespace
}  // namespace hb
