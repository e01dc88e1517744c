// The runner's reference computes a KV head's query group in one pass (ref::attention_group):
// it must give attention_head's and probabilities_head's figures to the bit, or accuracy figures
// would move with an optimisation.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "kernels/reference/attention_ref.h"
#include "tests/kernels/kv_fixture.h"

namespace hb {
namespace {

TEST(ReferenceGroup, SameFiguresToTheBitAsOneHeadAtATime) {
  AttentionShape shape;
  shape.q_heads = 6;
  shape.kv_heads = 2;
  shape.head_dim = 20;
  std::mt19937 gen(7);
  std::normal_distribution<float> nd(0.0f, 1.5f);
  for (int64_t n : {0, 1, 7, 8, 29, 64}) {  // empty, below, at and past the 8-token blocks
    SCOPED_TRACE(n);
    const int d = shape.head_dim;
    std::vector<float> q(static_cast<size_t>(shape.q_heads) * d);
    std::vector<float> k(static_cast<size_t>(n) * shape.kv_heads * d), v(k.size());
    for (auto* x : {&q, &k, &v})
      for (float& f : *x) f = nd(gen);
    for (int kh = 0; kh < shape.kv_heads; ++kh) {
      const std::vector<int> heads = {kh * 3, kh * 3 + 1, kh * 3 + 2};
      std::vector<double> o(heads.size() * d), lse(heads.size()), probs(heads.size() * n);
      ref::attention_group(shape, heads, q.data(), k.data(), v.data(), n, o.data(), lse.data(),
                           probs.data());
      for (size_t i = 0; i < heads.size(); ++i) {
        std::vector<double> oh(d);
        double l = 0;
        const float* qh = q.data() + heads[i] * d;
        ref::attention_head(shape, heads[i], qh, k.data(), v.data(), n, oh.data(), &l);
        EXPECT_EQ(lse[i], l);
        for (int j = 0; j < d; ++j) EXPECT_EQ(o[i * d + j], oh[j]) << j;
        const auto p = ref::probabilities_head(shape, heads[i], qh, k.data(), n);
        for (int64_t t = 0; t < n; ++t) EXPECT_EQ(probs[i * n + t], p[t]) << t;
      }
    }
  }
}

// Inputs for the level comparison: a normal spread, or one mixing zeros of both signs,
// subnormal-range products and magnitudes near 1e15 whose products sum far from 1.
void fill(std::vector<float>& x, bool wide, std::mt19937& gen) {
  std::normal_distribution<float> nd(0.0f, 1.5f);
  std::uniform_int_distribution<int> pick(0, 5);
  const float kinds[] = {0.0f, -0.0f, 1e-30f, -3e-25f, 1e15f, -2e14f};
  for (float& f : x) f = wide && pick(gen) < 3 ? kinds[pick(gen)] * (1 + nd(gen)) : nd(gen);
}

struct GroupOut {
  std::vector<double> o, lse, probs;
};

GroupOut run_group(const AttentionShape& shape, const std::vector<int>& heads,
                   const std::vector<float>& q, const std::vector<float>& k,
                   const std::vector<float>& v, int64_t n, bool with_probs, SimdLevel level) {
  const size_t G = heads.size();
  GroupOut r{std::vector<double>(G * shape.head_dim), std::vector<double>(G),
             std::vector<double>(with_probs ? G * n : 0)};
  ref::attention_group(shape, heads, q.data(), k.data(), v.data(), n, r.o.data(), r.lse.data(),
                       with_probs ? r.probs.data() : nullptr, 0, level);
  return r;
}

// Bit patterns, so that a NaN or a -0 would have to match too.
std::vector<uint64_t> bits(const std::vector<double>& x) {
  std::vector<uint64_t> b(x.size());
  for (size_t i = 0; i < x.size(); ++i) b[i] = std::bit_cast<uint64_t>(x[i]);
  return b;
}

// Each SIMD level's copy of the group loops must give the baseline's figures to the bit (no
// reassociated sum, no contracted FMA): widths that are and are not multiples of the vector
// lanes, block edges (7, 8, 9 tokens) and a long run, groups of 1, 4 and 8.
TEST(ReferenceGroup, EverySimdLevelGivesTheScalarBits) {
  std::mt19937 gen(13);
  for (int d : {64, 128, 72})
    for (int group : {1, 4, 8})
      for (int64_t n : {0, 1, 7, 8, 9, 1000})
        for (bool wide : {false, true}) {
          const AttentionShape shape{2 * group, 2, d, DType::f32};
          std::vector<float> q(static_cast<size_t>(shape.q_heads) * d);
          std::vector<float> k(static_cast<size_t>(n) * shape.kv_heads * d), v(k.size());
          for (auto* x : {&q, &k, &v}) fill(*x, wide, gen);
          std::vector<int> heads;  // KV head 1's group: rows at an offset within each token
          for (int h = group; h < 2 * group; ++h) heads.push_back(h);
          for (bool with_probs : {true, false}) {
            const GroupOut base =
                run_group(shape, heads, q, k, v, n, with_probs, SimdLevel::scalar);
            for (SimdLevel l : test::available_levels()) {
              SCOPED_TRACE("d=" + std::to_string(d) + " group=" + std::to_string(group) +
                           " n=" + std::to_string(n) + (wide ? " wide" : " normal") +
                           (with_probs ? " probs " : " ") + simd_level_name(l));
              const GroupOut got = run_group(shape, heads, q, k, v, n, with_probs, l);
              EXPECT_EQ(bits(got.o), bits(base.o));
              EXPECT_EQ(bits(got.lse), bits(base.lse));
              EXPECT_EQ(bits(got.probs), bits(base.probs));
            }
          }
        }
}

TEST(ReferenceGroup, ALevelTheCpuLacksIsAnError) {
  if (best_simd_level() == SimdLevel::avx512) GTEST_SKIP() << "this CPU runs every level";
  const AttentionShape shape{2, 1, 8, DType::f32};
  std::vector<float> q(16, 1.0f), kv(8, 1.0f);
  std::vector<double> o(16), lse(2);
  EXPECT_THROW(ref::attention_group(shape, {0, 1}, q.data(), kv.data(), kv.data(), 1, o.data(),
                                    lse.data(), nullptr, 0, SimdLevel::avx512),
               Error);
}

}  // namespace
}  // namespace hb
