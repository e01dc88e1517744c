// Scoring, top-k, gather and the logit merge: the pieces sparse and hybrid strategies share.
// Logit tolerance: 1e-4 * max(1, |logit|), the same fp32-dot-product bound as attention_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <utility>

#include "core/error.h"
#include "core/rng.h"
#include "kernels/cpu/select.h"
#include "tests/kernels/kv_fixture.h"

namespace hb {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(ScoreLogits, MatchesReferenceForEveryLevelShapeAndDtype) {
  ThreadPool pool(3);
  for (auto [hq, hkv, d, page] : {std::tuple{4, 4, 64, 16}, std::tuple{12, 4, 80, 16},
                                  std::tuple{16, 2, 128, 16}, std::tuple{8, 2, 64, 64}})
    for (DType t : {DType::f32, DType::f16, DType::bf16}) {
      const AttentionShape shape{hq, hkv, d, t};
      const auto in = test::make_paged_input(shape, 1500, WorkloadSpec::Kind::structured, d, page);
      for (SimdLevel l : test::available_levels())
        for (auto [b, e] :
             {std::pair<int64_t, int64_t>{0, -1}, {3, 19}, {700, 701}, {1000, 5000}}) {
          const int64_t stride = 1600;
          std::vector<float> logits(static_cast<size_t>(hq) * stride, 42.0f);
          cpu::score_logits(in.q(), hq, in.view(), b, e, 0, logits.data(), stride, pool, l);
          const int64_t end = e < 0 || e > 1500 ? 1500 : e;
          for (int h = 0; h < hq; ++h) {
            for (int64_t tk = b; tk < end; ++tk) {
              const double want = test::ref_logit(in, in.q(), h, tk);
              ASSERT_NEAR(logits[h * stride + (tk - b)], want, 1e-4 * std::max(1.0, std::abs(want)))
                  << shape.to_string() << " " << simd_level_name(l) << " h" << h << " t" << tk;
            }
            ASSERT_EQ(logits[h * stride + (end - b)], 42.0f) << "wrote past the range";
          }
        }
    }
}

// Reference order: numbers (incl. +-inf) before NaN, larger first, lower index on ties.
std::vector<int32_t> ref_topk(const std::vector<float>& v, int64_t k) {
  std::vector<int32_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](int32_t a, int32_t b) {
    if (std::isnan(v[a]) != std::isnan(v[b])) return std::isnan(v[b]);
    return !std::isnan(v[a]) && v[a] > v[b];
  });
  idx.resize(std::clamp<int64_t>(k, 0, static_cast<int64_t>(v.size())));
  return idx;
}

std::vector<int32_t> topk_one(const std::vector<float>& v, int64_t k,
                              std::vector<float>* vals = nullptr) {
  const int64_t kk = std::clamp<int64_t>(k, 0, static_cast<int64_t>(v.size()));
  std::vector<int32_t> idx(kk, -1);
  std::vector<float> val(kk);
  cpu::topk_rows(v.data(), 1, static_cast<int64_t>(v.size()), static_cast<int64_t>(v.size()), k,
                 idx.data(), val.data());
  if (vals) *vals = val;
  return idx;
}

TEST(TopK, RandomRowsMatchASortWithAPool) {
  ThreadPool pool(3);
  const int rows = 7;
  const int64_t n = 5000, stride = 5003;
  Rng rng(3);
  std::vector<float> v(rows * stride);
  for (auto& x : v) x = std::round(rng.normal() * 50) / 10;  // many ties
  for (int64_t k : {int64_t{1}, int64_t{37}, int64_t{250}, n}) {
    std::vector<int32_t> idx(rows * k);
    std::vector<float> val(rows * k);
    cpu::topk_rows(v.data(), rows, n, stride, k, idx.data(), val.data(), &pool);
    for (int r = 0; r < rows; ++r) {
      std::vector<float> row(v.begin() + r * stride, v.begin() + r * stride + n);
      const auto want = ref_topk(row, k);
      ASSERT_EQ(std::vector<int32_t>(idx.begin() + r * k, idx.begin() + (r + 1) * k), want)
          << "row " << r;
      for (int64_t i = 0; i < k; ++i) ASSERT_EQ(val[r * k + i], row[want[i]]);
    }
  }
}

TEST(TopK, TiesGoToTheLowerIndex) {
  EXPECT_EQ(topk_one({3, 1, 3, 2, 3}, 2), (std::vector<int32_t>{0, 2}));
  EXPECT_EQ(topk_one({3, 1, 3, 2, 3}, 4), (std::vector<int32_t>{0, 2, 4, 3}));
  EXPECT_EQ(topk_one(std::vector<float>(9, 0.5f), 3), (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(topk_one({-0.0f, 0.0f, -0.0f}, 2), (std::vector<int32_t>{0, 1}));  // -0 == +0
}

TEST(TopK, NaNsComeAfterEveryNumber) {
  std::vector<float> vals;
  EXPECT_EQ(topk_one({kNaN, 1, kNaN, -kInf, 0}, 3, &vals), (std::vector<int32_t>{1, 4, 3}));
  EXPECT_EQ(vals, (std::vector<float>{1, 0, -kInf}));
  EXPECT_EQ(topk_one({kNaN, 1, kNaN, -kInf, 0}, 5), (std::vector<int32_t>{1, 4, 3, 0, 2}));
  EXPECT_EQ(topk_one({kNaN, kInf}, 1), (std::vector<int32_t>{1}));
}

TEST(TopK, KIsClamped) {
  EXPECT_EQ(topk_one({1, 2, 3}, 10), (std::vector<int32_t>{2, 1, 0}));
  EXPECT_TRUE(topk_one({1, 2, 3}, 0).empty());
  EXPECT_TRUE(topk_one({1, 2, 3}, -4).empty());
  EXPECT_TRUE(topk_one({}, 3).empty());
}

TEST(GatherRows, CopiesTheRowsOfTheCacheInItsDtype) {
  for (DType t : {DType::f32, DType::f16, DType::bf16}) {
    const AttentionShape shape{8, 2, 80, t};
    const auto in = test::make_paged_input(shape, 100);
    const std::vector<int32_t> tokens{99, 0, 17, 16, 42, 42, 63};
    const size_t es = dtype_size(t), n = tokens.size();
    for (int h = 0; h < 2; ++h) {
      std::vector<std::byte> v(n * 80 * es), k(n * 80 * es);
      cpu::gather_rows(in.view(), h, tokens.data(), static_cast<int64_t>(n), v.data(), k.data());
      std::vector<float> vf(n * 80), kf(n * 80);
      convert_to_fp32(t, v.data(), vf.data(), vf.size());
      convert_to_fp32(t, k.data(), kf.data(), kf.size());
      for (size_t i = 0; i < n; ++i)
        for (int j = 0; j < 80; ++j) {  // the workload's values are exact in the dtype
          ASSERT_EQ(vf[i * 80 + j], in.w.prompt.v_row(tokens[i], h)[j]);
          ASSERT_EQ(kf[i * 80 + j], in.w.prompt.k_row(tokens[i], h)[j]);
        }
      cpu::gather_rows(in.view(), h, tokens.data(), static_cast<int64_t>(n), v.data());  // V only
    }
  }
}

// HybridGen's path: the CPU scores its tokens, keeps the top k per query head and sends
// those logits and V rows; the accelerator merges them with its own tokens in one softmax.
struct LogitMergeCase {
  AttentionShape shape;
  Workload w;
  test::OwnedCache cpu_side, gpu_side;
  int64_t split;
  LogitMergeCase(const AttentionShape& s, int64_t n, int64_t split_at)
      : shape(s), w(make_workload(s, n, 1, WorkloadSpec{})), split(split_at) {
    cpu_side = test::make_cache(s, w.prompt, 0, split);
    gpu_side = test::make_cache(s, w.prompt, split, n);
  }
  const float* q() const { return w.steps[0].q.data(); }

  // Runs the merge with the top `k` CPU tokens per head (fp16 V rows over the link);
  // returns the selected token ids [q_heads][k].
  std::vector<int32_t> run(int64_t k, SimdLevel level, ThreadPool& pool, std::vector<float>& o,
                           std::vector<float>& lse, DType link = DType::f16) {
    const int hq = shape.q_heads, d = shape.head_dim;
    std::vector<float> logits(static_cast<size_t>(hq) * split);
    cpu::score_logits(q(), hq, cpu_side.view(), 0, split, 0, logits.data(), split, pool, level);
    k = std::clamp<int64_t>(k, 0, split);
    std::vector<int32_t> idx(hq * k);
    std::vector<float> top(hq * k);
    cpu::topk_rows(logits.data(), hq, split, split, k, idx.data(), top.data(), &pool);
    // Rows gathered in the cache dtype, converted to the link dtype.
    std::vector<std::byte> rows(static_cast<size_t>(k) * d * dtype_size(shape.kv_dtype));
    std::vector<float> rows_f(static_cast<size_t>(k) * d);
    std::vector<std::byte> ext_v(static_cast<size_t>(hq) * k * d * dtype_size(link));
    for (int h = 0; h < hq; ++h) {
      cpu::gather_rows(cpu_side.view(), shape.kv_head_of(h), idx.data() + h * k, k, rows.data());
      convert_to_fp32(shape.kv_dtype, rows.data(), rows_f.data(), rows_f.size());
      convert_from_fp32(link, rows_f.data(),
                        ext_v.data() + static_cast<size_t>(h) * k * d * dtype_size(link),
                        rows_f.size());
    }
    o.assign(static_cast<size_t>(hq) * d, 0);
    lse.assign(hq, 0);
    LogitMergeArgs a;
    a.q = q();
    a.q_heads = hq;
    a.ext_logits = top.data();
    a.ext_v = ext_v.data();
    a.ext_dtype = link;
    a.n_ext = k;
    a.local = gpu_side.view();
    a.o = o.data();
    a.lse = lse.data();
    cpu::logit_merge_attention(a, pool, level);
    return idx;
  }
};

TEST(LogitMerge, AllTokensIsExactAttention) {
  ThreadPool pool(2);
  for (DType t : {DType::f16, DType::bf16, DType::f32}) {
    LogitMergeCase c({8, 2, 128, t}, 1300, 900);
    std::vector<double> ro(8 * 128), rl(8);
    ref::attention(c.shape, c.q(), c.w.prompt.k.data(), c.w.prompt.v.data(), 1300, ro.data(),
                   rl.data());
    for (SimdLevel l : test::available_levels()) {
      std::vector<float> o, lse;
      // fp32 over the link for fp32 caches: then every value the merge sees is exact.
      c.run(900, l, pool, o, lse, t == DType::f32 ? DType::f32 : t);
      EXPECT_LT(test::rel_l2(o.data(), ro.data(), o.size()), 1e-4) << simd_level_name(l);
      for (int h = 0; h < 8; ++h) EXPECT_NEAR(lse[h], rl[h], 1e-4 * std::max(1.0, std::abs(rl[h])));
    }
  }
}

TEST(LogitMerge, TopKIsExactAttentionOverTheSelectedTokensPlusLocal) {
  ThreadPool pool(2);
  LogitMergeCase c({12, 4, 64, DType::f16}, 700, 500);
  const int d = 64;
  for (SimdLevel l : test::available_levels()) {
    std::vector<float> o, lse;
    const int64_t k = 40;
    const auto idx = c.run(k, l, pool, o, lse);
    for (int h = 0; h < 12; ++h) {
      // Dense rows of this head's selected CPU tokens followed by every GPU token.
      std::vector<float> kr, vr;
      const int kh = c.shape.kv_head_of(h);
      auto add = [&](int64_t tk) {
        kr.insert(kr.end(), c.w.prompt.k_row(tk, kh), c.w.prompt.k_row(tk, kh) + d);
        vr.insert(vr.end(), c.w.prompt.v_row(tk, kh), c.w.prompt.v_row(tk, kh) + d);
      };
      for (int64_t i = 0; i < k; ++i) add(idx[h * k + i]);
      for (int64_t tk = 500; tk < 700; ++tk) add(tk);
      std::vector<double> ro(d), rl(1);
      ref::attention({1, 1, d, DType::f16}, c.q() + h * d, kr.data(), vr.data(), k + 200, ro.data(),
                     rl.data());
      EXPECT_LT(test::rel_l2(o.data() + h * d, ro.data(), d), 1e-4) << "head " << h;
      EXPECT_NEAR(lse[h], rl[0], 1e-4 * std::max(1.0, std::abs(rl[0])));
    }
  }
}

TEST(LogitMerge, EitherSideMayBeEmpty) {
  ThreadPool pool(2);
  for (SimdLevel l : test::available_levels()) {
    {  // nothing external: plain local attention
      LogitMergeCase c({8, 2, 64, DType::f16}, 300, 100);
      std::vector<float> o, lse;
      c.run(0, l, pool, o, lse);
      std::vector<double> ro(8 * 64), rl(8);
      const size_t row = 2 * 64;
      ref::attention(c.shape, c.q(), c.w.prompt.k.data() + 100 * row,
                     c.w.prompt.v.data() + 100 * row, 200, ro.data(), rl.data());
      EXPECT_LT(test::rel_l2(o.data(), ro.data(), o.size()), 1e-4);
    }
    {  // no local tokens: attention over the external ones only
      LogitMergeCase c({8, 2, 64, DType::f16}, 300, 300);
      std::vector<float> o, lse;
      c.run(300, l, pool, o, lse);
      std::vector<double> ro(8 * 64), rl(8);
      ref::attention(c.shape, c.q(), c.w.prompt.k.data(), c.w.prompt.v.data(), 300, ro.data(),
                     rl.data());
      EXPECT_LT(test::rel_l2(o.data(), ro.data(), o.size()), 1e-4);
    }
    {  // neither: the neutral partial, no NaN
      LogitMergeCase c({8, 2, 64, DType::f16}, 0, 0);
      std::vector<float> o, lse;
      c.run(0, l, pool, o, lse);
      for (float x : o) EXPECT_EQ(x, 0.0f);
      for (float x : lse) EXPECT_EQ(x, -kInf);
    }
  }
}

// One GQA group's selections, each list strictly ascending: the union is the sorted distinct
// set of their entries, and every entry's slot points at itself in it.
TEST(AscendingUnion, IsTheSortedDistinctSetWithEachEntrysSlot) {
  Rng rng(7);
  for (int lists : {0, 1, 2, 4, 7, 8})
    for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{5}, int64_t{33}, int64_t{700}}) {
      const int64_t stride = n + 3;
      std::vector<int32_t> in(static_cast<size_t>(std::max(lists, 1)) * stride, -1);
      std::vector<int64_t> counts(std::max(lists, 1), 0);
      std::vector<int32_t> expect;
      for (int i = 0; i < lists; ++i) {
        // Entries from a range about 3n wide, so lists overlap in part (sinks, neighbours).
        std::vector<int32_t> pick;
        for (int32_t t = 0; t < static_cast<int32_t>(3 * n + 1); ++t)
          if (rng.uniform() < 0.33 && static_cast<int64_t>(pick.size()) < n) pick.push_back(t);
        counts[i] = static_cast<int64_t>(pick.size());
        std::copy(pick.begin(), pick.end(), in.begin() + i * stride);
        expect.insert(expect.end(), pick.begin(), pick.end());
      }
      std::sort(expect.begin(), expect.end());
      expect.erase(std::unique(expect.begin(), expect.end()), expect.end());
      std::vector<int32_t> u(in.size()), slot(in.size(), -1);
      const int64_t nu =
          cpu::ascending_union(in.data(), counts.data(), lists, stride, u.data(), slot.data());
      ASSERT_EQ(nu, static_cast<int64_t>(expect.size())) << lists << " lists of " << n;
      EXPECT_TRUE(std::equal(expect.begin(), expect.end(), u.begin()));
      for (int i = 0; i < lists; ++i)
        for (int64_t j = 0; j < counts[i]; ++j) {
          const int32_t s = slot[i * stride + j];
          ASSERT_GE(s, 0);
          ASSERT_LT(s, nu);
          EXPECT_EQ(u[s], in[i * stride + j]);
        }
    }
  std::vector<int32_t> none(1);
  std::vector<int64_t> zero(65, 0);
  EXPECT_THROW(cpu::ascending_union(none.data(), zero.data(), 65, 0, none.data(), none.data()),
               Error);
}

// A group's rows shipped once with a row index per entry give the output of every head
// shipping its own rows, to the bit, at every SIMD level; a row index outside its block is
// refused before anything is read.
// External rows only, fp32, against fp64: n from 0 to past two vector widths (every tail of
// the engine's weight loop), with -inf padding entries whose rows hold NaN (never read).
TEST(LogitMerge, ExternalRowsOfEveryCountWithPadding) {
  ThreadPool pool(1);
  const int d = 48, hq = 2;
  Rng rng(31);
  for (int64_t n : {0, 1, 2, 15, 16, 17, 33, 40})
    for (SimdLevel l : test::available_levels()) {
      std::vector<float> logits(static_cast<size_t>(hq) * n), rows(logits.size() * d);
      for (auto& x : logits) x = rng.normal() * 2.0f;
      for (auto& x : rows) x = rng.normal();
      for (int h = 0; h < hq; ++h)
        for (int64_t i = 0; i < n; i += 3) {  // every third entry is padding
          logits[h * n + i] = -kInf;
          for (int j = 0; j < d; ++j) rows[(h * n + i) * d + j] = kNaN;
        }
      LogitMergeArgs a;
      a.q_heads = hq;
      a.ext_logits = logits.data();
      a.ext_v = rows.data();
      a.ext_dtype = DType::f32;
      a.n_ext = n;
      a.local = PagedKvView{0, d, 16, DType::f32, nullptr};
      std::vector<float> o(static_cast<size_t>(hq) * d, 42.0f), lse(hq, 42.0f);
      a.o = o.data();
      a.lse = lse.data();
      cpu::logit_merge_attention(a, pool, l);
      for (int h = 0; h < hq; ++h) {
        double m = -kInf, sum = 0;
        for (int64_t i = 0; i < n; ++i) m = std::max<double>(m, logits[h * n + i]);
        std::vector<double> want(d, 0.0);
        for (int64_t i = 0; i < n && m > -kInf; ++i) {
          if (logits[h * n + i] == -kInf) continue;
          const double p = std::exp(logits[h * n + i] - m);
          sum += p;
          for (int j = 0; j < d; ++j) want[j] += p * rows[(h * n + i) * d + j];
        }
        if (sum == 0) {  // no real entry: the neutral partial
          EXPECT_EQ(lse[h], -kInf) << "n=" << n;
          for (int j = 0; j < d; ++j) EXPECT_EQ(o[h * d + j], 0.0f) << "n=" << n;
          continue;
        }
        for (int j = 0; j < d; ++j) want[j] /= sum;
        EXPECT_LT(test::rel_l2(o.data() + h * d, want.data(), d), 1e-5)
            << "n=" << n << " " << simd_level_name(l);
        EXPECT_NEAR(lse[h], m + std::log(sum), 1e-5 * std::max(1.0, std::abs(m)));
      }
    }
}

TEST(LogitMerge, SharedGroupRowsEqualPerHeadRows) {
  ThreadPool pool(2);
  const AttentionShape shape{12, 3, 64, DType::f16};
  const int hq = 12, g = 4, d = 64;
  const int64_t n = 900, split = 650, k = 37;
  LogitMergeCase c(shape, n, split);
  std::vector<float> logits(static_cast<size_t>(hq) * split);
  cpu::score_logits(c.q(), hq, c.cpu_side.view(), 0, split, 0, logits.data(), split, pool);
  std::vector<int32_t> idx(hq * k);
  std::vector<float> top(hq * k);
  cpu::topk_rows(logits.data(), hq, split, split, k, idx.data(), top.data(), &pool);
  for (int h = 0; h < hq; ++h) {  // ascending positions, logits alongside (as HybridGen ships)
    std::vector<std::pair<int32_t, float>> e;
    for (int64_t i = 0; i < k; ++i) e.emplace_back(idx[h * k + i], top[h * k + i]);
    std::sort(e.begin(), e.end());
    for (int64_t i = 0; i < k; ++i) idx[h * k + i] = e[i].first, top[h * k + i] = e[i].second;
  }
  const size_t row = static_cast<size_t>(d) * 2;
  std::vector<std::byte> dense(static_cast<size_t>(hq) * k * row);
  for (int h = 0; h < hq; ++h)
    cpu::gather_rows(c.cpu_side.view(), shape.kv_head_of(h), idx.data() + h * k, k,
                     dense.data() + h * k * row);
  std::vector<int32_t> urows(idx.size()), slots(idx.size());
  std::vector<int64_t> counts(hq, k), nu(hq / g);
  for (int b = 0; b < hq / g; ++b)
    nu[b] = cpu::ascending_union(idx.data() + b * g * k, counts.data(), g, k,
                                 urows.data() + b * g * k, slots.data() + b * g * k);
  const int64_t block = *std::max_element(nu.begin(), nu.end());
  EXPECT_LT(block, g * k);  // the group's heads share rows (the sinks' and recent pages' at least)
  std::vector<std::byte> shared(static_cast<size_t>(hq / g) * block * row);
  for (int b = 0; b < hq / g; ++b)
    cpu::gather_rows(c.cpu_side.view(), b, urows.data() + b * g * k, nu[b],
                     shared.data() + b * block * row);
  for (SimdLevel l : test::available_levels()) {
    std::vector<float> o1(hq * d), l1(hq), o2(hq * d), l2(hq);
    LogitMergeArgs a;
    a.q = c.q();
    a.q_heads = hq;
    a.ext_logits = top.data();
    a.ext_v = dense.data();
    a.ext_dtype = DType::f16;
    a.n_ext = k;
    a.local = c.gpu_side.view();
    a.o = o1.data();
    a.lse = l1.data();
    cpu::logit_merge_attention(a, pool, l);
    a.ext_v = shared.data();
    a.ext_rows = slots.data();
    a.ext_group = g;
    a.ext_block_rows = block;
    a.o = o2.data();
    a.lse = l2.data();
    cpu::logit_merge_attention(a, pool, l);
    EXPECT_EQ(o1, o2) << simd_level_name(l);
    EXPECT_EQ(l1, l2) << simd_level_name(l);
    slots[5] = static_cast<int32_t>(block);  // one past its block
    EXPECT_THROW(cpu::logit_merge_attention(a, pool, l), Error);
    slots[5] = 0;
    a.ext_group = 5;  // 12 query heads are not groups of 5
    EXPECT_THROW(cpu::logit_merge_attention(a, pool, l), Error);
    cpu::ascending_union(idx.data(), counts.data(), g, k, urows.data(), slots.data());
  }
}

}  // namespace
}  // namespace hb
