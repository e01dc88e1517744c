// The fused score + streaming top-k (cpu::select_topk, HybridGen's logit mode) against the
// separate path it replaces (score_logits, then topk_select_rows per query head): the same
// token positions and bit-identical logits, at every SIMD level, on random and structured
// inputs, with ties, NaN and infinities, k = 0 and k >= n, ranges that are not multiples of 16
// or of the page, GQA groups 1 / 4 / 7, head_dim 64 / 128, and several pool sizes (pieces).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "core/error.h"
#include "kernels/cpu/select.h"
#include "kernels/cpu/topk_select.h"
#include "tests/kernels/kv_fixture.h"

namespace hb {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

enum class Doctor { none, ties, nan_inf, all_equal };

// A workload with its K doctored before it enters the paged cache.
test::PagedInput doctored(const AttentionShape& shape, int64_t n, WorkloadSpec::Kind kind,
                          Doctor doc, int page, uint64_t seed) {
  test::PagedInput in;
  WorkloadSpec spec;
  spec.kind = kind;
  spec.seed = seed;
  in.w = make_workload(shape, n, 1, spec);
  DenseKv& p = in.w.prompt;
  const int d = shape.head_dim;
  for (int64_t t = 0; t < n; ++t)
    for (int h = 0; h < shape.kv_heads; ++h) {
      float* k = p.k.data() + (t * shape.kv_heads + h) * d;
      switch (doc) {
        case Doctor::none:
          break;
        case Doctor::ties:  // every third token repeats an earlier one: equal logits
          if (t % 3 == 2) std::memcpy(k, p.k.data() + ((t / 7) * shape.kv_heads + h) * d, d * 4);
          break;
        case Doctor::nan_inf:
          if (t % 11 == 4) k[t % d] = kNaN;
          if (t % 13 == 6) k[0] = (t % 2) ? kInf : -kInf;  // +-inf or NaN logits
          break;
        case Doctor::all_equal:
          std::memcpy(k, p.k.data() + h * d, d * 4);
          break;
      }
    }
  in.kv = test::make_cache(shape, p, 0, n, page);
  return in;
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, 4) == 0; }

// Runs both paths and compares them head by head.
void compare(const test::PagedInput& in, int64_t begin, const std::vector<int64_t>& ks,
             SimdLevel level, ThreadPool& pool, const std::string& what,
             const float* hint = nullptr) {
  const AttentionShape& s = in.w.shape;
  const int hq = s.q_heads;
  const int64_t n = in.cache().num_tokens(0), c = n - begin;
  std::vector<float> logits(static_cast<size_t>(hq) * c + 1);
  cpu::score_logits(in.q(), hq, in.view(), begin, -1, 0, logits.data(), c, pool, level);
  int64_t kmax = 1;
  for (int64_t k : ks) kmax = std::max(kmax, k);
  std::vector<int32_t> fi(static_cast<size_t>(hq) * kmax, -7), si(fi.size(), -7);
  std::vector<float> fv(fi.size(), 42), sv(fi.size(), 42);
  cpu::select_topk(in.q(), hq, in.view(), begin, 0, ks.data(), fi.data(), fv.data(), kmax, pool,
                   level, hint);
  for (int h = 0; h < hq; ++h) {
    cpu::topk_select_rows(logits.data() + static_cast<size_t>(h) * c, 1, c, c, ks[h],
                          si.data() + h * kmax, sv.data() + h * kmax);
    const int64_t k = std::clamp<int64_t>(ks[h], 0, c);
    int64_t finite = 0, nan_taken = 0;
    for (int64_t t = 0; t < c; ++t) finite += std::isfinite(logits[h * c + t]);
    for (int64_t i = 0; i < k; ++i) {
      const size_t j = static_cast<size_t>(h) * kmax + i;
      ASSERT_EQ(fi[j], si[j] + begin) << what << " head " << h << " rank " << i << " k " << k;
      ASSERT_TRUE(same_bits(fv[j], sv[j])) << what << " head " << h << " rank " << i;
      if (i > 0) {
        ASSERT_LT(fi[j - 1], fi[j]) << "ascending positions";
      }
      nan_taken += std::isnan(fv[j]);
    }
    // NaN is never taken ahead of a finite logit.
    if (nan_taken > 0) {
      ASSERT_LT(finite, k) << what << " head " << h;
    }
    if (k < kmax) {
      ASSERT_EQ(fi[static_cast<size_t>(h) * kmax + k], -7) << "wrote past k";
    }
  }
}

TEST(SelectTopk, EqualsScoreThenTopkSelect) {
  ThreadPool pool3(3), pool1(1);
  int cases = 0;
  for (auto [hq, hkv] : {std::pair{2, 2}, std::pair{8, 2}, std::pair{14, 2}})  // groups 1, 4, 7
    for (int d : {64, 128})
      for (auto kind : {WorkloadSpec::Kind::structured, WorkloadSpec::Kind::uniform})
        for (Doctor doc : {Doctor::none, Doctor::ties, Doctor::nan_inf, Doctor::all_equal})
          for (int64_t n : {int64_t{37}, int64_t{1000}, int64_t{4099}}) {
            if (doc != Doctor::none && kind == WorkloadSpec::Kind::uniform) continue;
            const int page = n == 1000 ? 64 : kDefaultPageTokens;
            const AttentionShape shape{hq, hkv, d, DType::f16};
            const auto in = doctored(shape, n, kind, doc, page, 7 + n + d);
            for (int64_t begin : {int64_t{0}, int64_t{5}, int64_t{70}}) {
              if (begin >= n) continue;
              const int64_t c = n - begin;
              for (int64_t base : {int64_t{0}, int64_t{1}, int64_t{17}, c / 20, c, c + 5}) {
                std::vector<int64_t> ks(hq);
                for (int h = 0; h < hq; ++h)  // per-head k differ; k = 0 stays 0 on every head
                  ks[h] = base == 0 ? 0 : std::max<int64_t>(1, base - (h % 3));
                for (SimdLevel l : test::available_levels()) {
                  const std::string what = shape.to_string() + " n" + std::to_string(n) + " b" +
                                           std::to_string(begin) + " k" + std::to_string(base) +
                                           " doc" + std::to_string(static_cast<int>(doc)) + " " +
                                           simd_level_name(l);
                  compare(in, begin, ks, l, (n + base) % 2 ? pool1 : pool3, what);
                  if (::testing::Test::HasFatalFailure()) return;
                  ++cases;
                }
              }
            }
          }
  EXPECT_GT(cases, 500);
}

TEST(SelectTopk, F32AndBf16Caches) {
  ThreadPool pool(2);
  for (DType t : {DType::f32, DType::bf16}) {
    const AttentionShape shape{8, 2, 128, t};
    const auto in = test::make_paged_input(shape, 3001, WorkloadSpec::Kind::structured, 3);
    for (SimdLevel l : test::available_levels()) {
      compare(in, 0, std::vector<int64_t>(8, 150), l, pool, std::string(dtype_name(t)));
      compare(in, 33, std::vector<int64_t>(8, 2968), l, pool, std::string(dtype_name(t)) + " all");
    }
  }
}

TEST(SelectTopk, RejectsAShapeTheEngineCannotRun) {
  ThreadPool pool(1);
  const AttentionShape shape{8, 2, 64, DType::f16};
  const auto in = test::make_paged_input(shape, 100);
  std::vector<int64_t> ks(7, 4);
  std::vector<int32_t> idx(7 * 4);
  std::vector<float> val(7 * 4);
  EXPECT_THROW(
      cpu::select_topk(in.q(), 7, in.view(), 0, 0, ks.data(), idx.data(), val.data(), 4, pool),
      Error);
}

}  // namespace
}  // namespace hb

namespace hb {
namespace {

// Large ranges start from a floor estimated on a sample of sub-blocks (32 blocks of 16 tokens
// spread over the range, select.cpp). Here the sampled blocks hold the only large logits and
// every other logit is 0, so the floor lies above the k-th logit: the pass must notice and
// start over without a floor, with the same result as the separate path.
TEST(SelectTopk, AFloorAboveTheKthLogitFallsBack) {
  ThreadPool pool(1);
  const AttentionShape shape{8, 2, 64, DType::f16};
  const int64_t n = 4099, step = n / 32;
  test::PagedInput in;
  in.w = make_workload(shape, n, 1, WorkloadSpec{});
  DenseKv& p = in.w.prompt;
  const std::vector<float> base(p.k.begin(), p.k.begin() + 2 * 64);
  // The sampled blocks: block j starts at j * step plus select.cpp's jitter.
  auto block_of = [&](int64_t t) -> int64_t {
    const int64_t j = t / step;
    const int64_t jitter =
        static_cast<int64_t>((static_cast<uint64_t>(j + 1) * 0x9E3779B97F4A7C15ull) >> 40) %
        (step - 16);
    const int64_t s0 = j * step + jitter;
    return j < 32 && t >= s0 && t < s0 + 16 ? j : -1;
  };
  for (int64_t t = 0; t < n; ++t)
    for (int h = 0; h < 2; ++h) {
      float* kr = p.k.data() + (t * 2 + h) * 64;
      const int64_t j = block_of(t);
      const bool sampled = j >= 0;
      const float f = sampled ? ((j % 2) ? 1.0f : -1.0f) * static_cast<float>(4 + j) / 4 : 0.0f;
      for (int i = 0; i < 64; ++i) kr[i] = f * base[h * 64 + i];
    }
  in.kv = test::make_cache(shape, p, 0, n);
  const int64_t before = cpu::g_select_fallbacks.load();
  for (SimdLevel l : test::available_levels())
    compare(in, 0, std::vector<int64_t>(8, 400), l, pool, "fallback");
  EXPECT_EQ(cpu::g_select_fallbacks.load() - before,
            static_cast<int64_t>(test::available_levels().size()));
}

// A floor hint only changes where the heads start: a good one (below the k-th logit), one
// above it (the sampled pass runs instead, counted), and hints missing for some or all heads
// (NaN, -inf: the sampled pass, not counted) all select exactly what score + topk_select_rows
// select.
TEST(SelectTopk, AHintNeverChangesTheSelection) {
  ThreadPool pool(2);
  for (Doctor doc : {Doctor::none, Doctor::ties}) {
    const AttentionShape shape{8, 2, 64, DType::f16};
    const int64_t n = 4099, k = 200;
    const auto in = doctored(shape, n, WorkloadSpec::Kind::structured, doc, kDefaultPageTokens, 11);
    std::vector<float> logits(static_cast<size_t>(8) * n);
    cpu::score_logits(in.q(), 8, in.view(), 0, -1, 0, logits.data(), n, pool);
    std::vector<float> kth(8);
    for (int h = 0; h < 8; ++h) {
      std::vector<int32_t> idx(k);
      std::vector<float> val(k);
      cpu::topk_select_rows(logits.data() + h * n, 1, n, n, k, idx.data(), val.data());
      kth[h] = *std::min_element(val.begin(), val.end());
    }
    std::vector<float> good(8), high(8), none(8);
    for (int h = 0; h < 8; ++h) {
      good[h] = kth[h] - 0.5f;
      high[h] = h == 3 ? kth[h] + 1.0f : kth[h] - 0.5f;   // one head's hint is too high
      none[h] = h % 2 ? kNaN : h == 0 ? -kInf : good[h];  // most heads have one, not all
    }
    const std::vector<int64_t> ks(8, k);
    for (SimdLevel l : test::available_levels()) {
      const int64_t misses = cpu::g_select_hint_misses.load();
      compare(in, 0, ks, l, pool, "good hint", good.data());
      compare(in, 0, ks, l, pool, "no hint", none.data());
      EXPECT_EQ(cpu::g_select_hint_misses.load(), misses) << simd_level_name(l);
      compare(in, 0, ks, l, pool, "a hint too high", high.data());
      EXPECT_EQ(cpu::g_select_hint_misses.load(), misses + 1) << simd_level_name(l);
    }
  }
}

}  // namespace
}  // namespace hb
