// The policy kernels (core/policy_args.h) through the Accelerator interface, on every
// accelerator: the cpu accelerator everywhere, CUDA where a GPU is (skipping with the reason
// here, failing under HB_REQUIRE_GPU=1). Each op is checked against a plain reference written
// here (fp64 where there is arithmetic), so the same test judges both implementations.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

#include "core/accelerator.h"
#include "core/dtype.h"
#include "kernels/backend.h"
#include "tests/kernels/cuda_test_util.h"

namespace hb {
namespace {

class PolicyOps : public ::testing::TestWithParam<AcceleratorKind> {
 protected:
  void SetUp() override {
    if (GetParam() == AcceleratorKind::cuda) {
      HB_REQUIRE_GPU_OR_SKIP();
#ifdef HB_WITH_CUDA
      acc_ = &test::gpu();
#endif
    } else {
      AcceleratorOptions o;
      o.kind = AcceleratorKind::cpu;
      o.cpu_threads = 2;
      owned_ = make_accelerator(o);
      acc_ = owned_.get();
    }
  }
  // Accelerator memory holding `host`, and reading it back.
  template <class T>
  Buffer put(const std::vector<T>& host) {
    Buffer b = acc_->memory()->allocate(std::max<size_t>(host.size(), 1) * sizeof(T));
    if (!host.empty()) acc_->copy_to_device(b.data(), host.data(), host.size() * sizeof(T));
    acc_->synchronize();
    return b;
  }
  template <class T>
  std::vector<T> get(const Buffer& b, size_t n) {
    std::vector<T> out(n);
    if (n) acc_->copy_to_host(out.data(), b.data(), n * sizeof(T));
    acc_->synchronize();
    return out;
  }
  Accelerator* acc_ = nullptr;
  std::unique_ptr<Accelerator> owned_;
};

// Brute force: indices of the k largest (NaN as -inf, ties by lower index), ascending.
std::vector<int32_t> topk_reference(const float* v, int64_t n, int64_t k) {
  auto rank = [](float x) { return std::isnan(x) ? -std::numeric_limits<float>::infinity() : x; };
  std::vector<int32_t> idx(static_cast<size_t>(n));
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(),
                   [&](int32_t a, int32_t b) { return rank(v[a]) > rank(v[b]); });
  idx.resize(static_cast<size_t>(std::clamp<int64_t>(k, 0, n)));
  std::sort(idx.begin(), idx.end());
  return idx;
}

TEST_P(PolicyOps, TopkRowsIsTheReferenceSelection) {
  std::mt19937 rng(3);
  const float inf = std::numeric_limits<float>::infinity();
  for (int64_t n : {1, 9, 100, 2049, 70001}) {
    const int rows = 3;
    const int64_t stride = n + 3;
    std::vector<float> v(static_cast<size_t>(rows) * stride, 123.0f);  // padding never chosen
    for (int r = 0; r < rows; ++r)
      for (int64_t t = 0; t < n; ++t) {
        float x = std::normal_distribution<float>(0, 2)(rng);
        if (r == 1) x = std::round(x);  // ties
        if (r == 2 && t % 7 == 0) x = t % 3 == 0 ? std::nanf("") : t % 3 == 1 ? -inf : -0.0f;
        v[r * stride + t] = x;
      }
    Buffer dv = put(v);
    for (int64_t k : {int64_t{1}, n / 2, n, n + 4}) {
      const int64_t kk = std::min(k, n);
      Buffer out = acc_->memory()->allocate(static_cast<size_t>(rows) * kk * 4);
      acc_->enqueue(TopkRowsArgs{dv.as<float>(), rows, n, stride, k, out.as<int32_t>()});
      const auto got = get<int32_t>(out, static_cast<size_t>(rows) * kk);
      for (int r = 0; r < rows; ++r) {
        const auto want = topk_reference(v.data() + r * stride, n, k);
        ASSERT_EQ(std::vector<int32_t>(got.begin() + r * kk, got.begin() + (r + 1) * kk), want)
            << "n " << n << " k " << k << " row " << r;
      }
    }
  }
}

TEST_P(PolicyOps, HeavyHitterUpdateAccumulatesAndPicksTheLowestOutsideTheWindow) {
  const int B = 2, Hq = 6, Hkv = 2, G = Hq / Hkv;
  const int64_t cap = 300;
  std::mt19937 rng(5);
  std::vector<float> logits(static_cast<size_t>(B) * Hq * cap), lse(B * Hq), scores(B * Hkv * cap);
  std::vector<int64_t> tags(scores.size());
  for (auto& x : logits) x = std::normal_distribution<float>(0, 1.5f)(rng);
  for (auto& x : lse) x = 4.0f + std::uniform_real_distribution<float>(0, 1)(rng);
  lse[3] = -std::numeric_limits<float>::infinity();  // a head that attended nothing
  for (size_t i = 0; i < scores.size(); ++i) {
    scores[i] = std::uniform_real_distribution<float>(0, 2)(rng);
    tags[i] = static_cast<int64_t>(i % cap) * 2;
  }
  const std::vector<int64_t> filled = {cap, cap - 10};  // sequence 1 is still filling
  const std::vector<int64_t> fresh = {17, 250, 0, 289};
  const int64_t fresh_tag = 9999, recent_from = 400;
  Buffer dl = put(logits), dlse = put(lse), ds = put(scores), dt = put(tags),
         dv = acc_->memory()->allocate(B * Hkv * 4);
  HeavyHitterArgs a;
  a.batch = B, a.q_heads = Hq, a.kv_heads = Hkv, a.cap = cap;
  a.logits = dl.as<float>(), a.lse = dlse.as<float>(), a.scores = ds.as<float>();
  a.tags = dt.as<int64_t>(), a.victims = dv.as<int32_t>();
  a.filled = filled.data(), a.fresh_slot = fresh.data();
  a.fresh_tag = fresh_tag, a.recent_from = recent_from;
  acc_->enqueue(a);
  const auto got_s = get<float>(ds, scores.size());
  const auto got_t = get<int64_t>(dt, tags.size());
  const auto got_v = get<int32_t>(dv, B * Hkv);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < Hkv; ++h) {
      const size_t bh = static_cast<size_t>(b) * Hkv + h;
      for (int64_t t = 0; t < cap; ++t) {
        double want = t == fresh[bh] ? 0.0 : scores[bh * cap + t];
        if (t < filled[b])
          for (int g = 0; g < G; ++g) {
            const int qh = h * G + g;
            if (std::isfinite(lse[b * Hq + qh]))
              want += std::exp(double{logits[(b * Hq + qh) * cap + t]} - lse[b * Hq + qh]);
          }
        ASSERT_NEAR(got_s[bh * cap + t], want, 1e-5 * std::max(1.0, want)) << bh << " " << t;
        ASSERT_EQ(got_t[bh * cap + t], t == fresh[bh] ? fresh_tag : tags[bh * cap + t]);
      }
      if (filled[b] < cap) {
        EXPECT_EQ(got_v[bh], -1);
        continue;
      }
      int64_t best = -1;  // judged on the scores the op wrote, so rounding cannot flip it
      for (int64_t t = 0; t < cap; ++t)
        if (got_t[bh * cap + t] < recent_from &&
            (best < 0 || got_s[bh * cap + t] < got_s[bh * cap + best]))
          best = t;
      EXPECT_EQ(got_v[bh], best) << "head " << bh;
      EXPECT_NE(got_v[bh], fresh[bh]);  // the fresh token's tag is inside the window
    }
}

TEST_P(PolicyOps, PageBoundsFoldKeysAndBoundEveryKeyOfThePage) {
  const int B = 2, Hq = 4, Hkv = 2, d = 64, slots = 16, pages = 21;
  const DType dt = DType::bf16;
  const size_t es = dtype_size(dt), block = static_cast<size_t>(slots) * d * es;
  const int blocks = (pages + slots - 1) / slots;
  std::mt19937 rng(11);
  std::vector<float> q(static_cast<size_t>(B) * Hq * d);
  for (auto& x : q) x = std::normal_distribution<float>(0, 1)(rng);
  Buffer dq = put(q), c = acc_->memory()->allocate(B * Hkv * blocks * block),
         r = acc_->memory()->allocate(B * Hkv * blocks * block),
         box = acc_->memory()->allocate(B * Hkv * 2 * d * 4);
  // Every page of every head gets 3 keys folded in, one step at a time; the fp64 box is kept.
  std::vector<double> lo(static_cast<size_t>(B) * Hkv * pages * d, 1e30), hi(lo.size(), -1e30);
  std::vector<std::byte*> cb(B * Hkv), rb(B * Hkv);
  for (int p = 0; p < pages; ++p)
    for (int step = 0; step < 3; ++step) {
      std::vector<float> keys(static_cast<size_t>(B) * Hkv * d);
      for (size_t i = 0; i < keys.size(); ++i) {
        keys[i] = std::normal_distribution<float>(0, 1)(rng);
        const size_t row = i / d, at = (row * pages + p) * d + i % d;
        lo[at] = std::min<double>(lo[at], keys[i]);
        hi[at] = std::max<double>(hi[at], keys[i]);
      }
      Buffer dk = put(keys);
      for (int row = 0; row < B * Hkv; ++row) {
        cb[row] = c.as<std::byte>() + (row * blocks + p / slots) * block;
        rb[row] = r.as<std::byte>() + (row * blocks + p / slots) * block;
      }
      acc_->enqueue(PageBoundFoldArgs{B * Hkv, d, dt, dk.as<float>(), box.as<float>(), step == 0,
                                      cb.data(), rb.data(), slots, p % slots});
      acc_->synchronize();
    }
  std::vector<PageRef> ct(B * Hkv * blocks), rt(ct.size());
  for (size_t i = 0; i < ct.size(); ++i) {
    ct[i] = PageRef{c.as<std::byte>() + i * block, nullptr};
    rt[i] = PageRef{r.as<std::byte>() + i * block, nullptr};
  }
  std::vector<KvHeadView> ch(B * Hkv), rh(B * Hkv);
  std::vector<PagedKvView> cv(B), rv(B);
  for (int row = 0; row < B * Hkv; ++row) {
    ch[row] = KvHeadView{ct.data() + row * blocks, pages};
    rh[row] = KvHeadView{rt.data() + row * blocks, pages};
  }
  for (int b = 0; b < B; ++b) {
    cv[b] = PagedKvView{Hkv, d, slots, dt, ch.data() + b * Hkv};
    rv[b] = PagedKvView{Hkv, d, slots, dt, rh.data() + b * Hkv};
  }
  const int64_t stride = pages + 2;
  Buffer s = acc_->memory()->allocate(2 * B * Hq * stride * 4),
         qa = acc_->memory()->allocate(B * Hq * d * 4);
  PageBoundScoreArgs a;
  a.batch = B, a.q_heads = Hq, a.q = dq.as<float>(), a.centers = cv.data(), a.radii = rv.data();
  a.n_pages = pages, a.scale = 0.5f, a.scores = s.as<float>(), a.stride = stride;
  a.qabs = qa.as<float>(), a.radius_scores = s.as<float>() + B * Hq * stride;
  acc_->enqueue(a);
  const auto got = get<float>(s, static_cast<size_t>(B) * Hq * stride);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < Hq; ++h)
      for (int p = 0; p < pages; ++p) {
        const size_t row = static_cast<size_t>(b) * Hkv + h / (Hq / Hkv);
        double want = 0;  // sum_i max(q_i min_i, q_i max_i), center/radius rounded to bf16
        for (int i = 0; i < d; ++i) {
          const double l = lo[(row * pages + p) * d + i], u = hi[(row * pages + p) * d + i];
          const double cc = bf16_to_fp32(fp32_to_bf16(static_cast<float>(0.5 * (u + l))));
          const double rr = bf16_to_fp32(fp32_to_bf16(static_cast<float>(0.5 * (u - l))));
          const double qi = q[(static_cast<size_t>(b) * Hq + h) * d + i];
          want += qi * cc + std::abs(qi) * rr;
        }
        ASSERT_NEAR(got[(b * Hq + h) * stride + p], 0.5 * want,
                    1e-3 * std::max(1.0, std::abs(want)))
            << "b" << b << " h" << h << " page " << p;
      }
}

TEST_P(PolicyOps, GroupMaxAndCountWithinAlpha) {
  const int rows = 12, group = 3;
  const int64_t n = 1031, stride = 1040;
  std::mt19937 rng(13);
  std::vector<float> in(static_cast<size_t>(rows) * stride);
  for (auto& x : in) x = std::round(std::normal_distribution<float>(0, 4)(rng));
  Buffer din = put(in), out = acc_->memory()->allocate(rows / group * stride * 4),
         cnt = acc_->memory()->allocate(rows / group * 4);
  acc_->enqueue(GroupMaxArgs{din.as<float>(), rows, group, n, stride, out.as<float>(), stride, 2.5f,
                             cnt.as<int32_t>()});
  const auto got = get<float>(out, rows / group * stride);
  const auto counts = get<int32_t>(cnt, rows / group);
  for (int r = 0; r < rows / group; ++r) {
    float m = -std::numeric_limits<float>::infinity();
    for (int64_t t = 0; t < n; ++t) {
      float want = in[r * group * stride + t];
      for (int g = 1; g < group; ++g) want = std::max(want, in[(r * group + g) * stride + t]);
      ASSERT_EQ(got[r * stride + t], want);
      m = std::max(m, want);
    }
    int want_count = 0;
    for (int64_t t = 0; t < n; ++t) want_count += got[r * stride + t] > m - 2.5f;
    EXPECT_EQ(counts[r], want_count) << "row " << r;
  }
}

TEST_P(PolicyOps, ProjectRowsIsTheFp64Product) {
  const int rows = 10, dim = 64, cols = 13, width = 16, per = 5;
  std::mt19937 rng(17);
  std::vector<float> x(static_cast<size_t>(rows) * dim),
      proj(static_cast<size_t>(rows / per) * dim * width);
  for (auto& v : x) v = std::normal_distribution<float>(0, 1)(rng);
  for (auto& v : proj) v = std::normal_distribution<float>(0, 1)(rng);
  Buffer dx = put(x), dp = put(proj), out = put(std::vector<float>(rows * width, 7.0f));
  ProjectRowsArgs a;
  a.x = dx.as<float>(), a.x_stride = dim, a.rows = rows, a.dim = dim, a.rows_per_proj = per;
  a.cols = cols, a.out_width = width, a.proj = dp.as<float>(), a.out = out.as<float>();
  acc_->enqueue(a);
  const auto got = get<float>(out, rows * width);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < width; ++c) {
      double want = 0;
      if (c < cols)
        for (int i = 0; i < dim; ++i)
          want += double{x[r * dim + i]} * proj[((r / per) * dim + i) * width + c];
      ASSERT_NEAR(got[r * width + c], want, 1e-4 * std::max(1.0, std::abs(want))) << r << "," << c;
    }
}

TEST_P(PolicyOps, RowsToPagesWritesTheCacheLayout) {
  const int groups = 3, width = 32, P = 16;
  const DType dt = DType::f16;
  const size_t es = 2, block = static_cast<size_t>(P) * width * es;
  const int64_t count = 37, pages = 4;  // 37 rows, then one more at slot 37
  std::mt19937 rng(19);
  std::vector<float> rows(static_cast<size_t>(groups) * count * width);
  for (auto& v : rows) v = std::normal_distribution<float>(0, 1)(rng);
  std::vector<uint16_t> rows16(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) rows16[i] = fp32_to_fp16(rows[i]);
  std::vector<float> extra(static_cast<size_t>(groups) * width);
  for (auto& v : extra) v = std::normal_distribution<float>(0, 1)(rng);
  const size_t region = pages * block;  // per group: K blocks then V blocks
  Buffer src = put(rows16), one = put(extra),
         dst = put(std::vector<uint16_t>(groups * 2 * region / es, 0x7777));
  RowsToPagesArgs a;
  a.groups = groups, a.width = width, a.page_tokens = P, a.count = count, a.dtype = dt;
  a.src_f32 = false, a.zero_tail = true, a.k_src = src.data(), a.v_src = src.data();  // K = V
  a.src_stride = static_cast<size_t>(count) * width * es;
  a.k_dst = dst.as<std::byte>(), a.v_dst = dst.as<std::byte>() + region, a.dst_stride = 2 * region;
  acc_->enqueue(a);
  RowsToPagesArgs b = a;
  b.count = 1, b.first_slot = count, b.src_f32 = true, b.zero_tail = false;
  b.k_src = one.data(), b.v_src = one.data(), b.src_stride = width * 4;
  acc_->enqueue(b);
  const auto got = get<uint16_t>(dst, groups * 2 * region / es);
  for (int g = 0; g < groups; ++g)
    for (int64_t slot = 0; slot < pages * P; ++slot)
      for (int j = 0; j < width; ++j) {
        const uint16_t want = slot < count    ? rows16[(g * count + slot) * width + j]
                              : slot == count ? fp32_to_fp16(extra[g * width + j])
                              : slot < 3 * P  ? uint16_t{0}       // the last page's zeroed tail
                                              : uint16_t{0x7777};  // untouched past it
        const size_t page = slot / P, s = slot % P;
        const size_t k_at = (g * 2 * region + page * block) / es + k_block_offset(j, s, P);
        const size_t v_at =
            (g * 2 * region + region + page * block) / es + v_block_offset(j, s, width);
        ASSERT_EQ(got[k_at], want) << "K g" << g << " slot " << slot << " dim " << j;
        ASSERT_EQ(got[v_at], want) << "V g" << g << " slot " << slot << " dim " << j;
      }
}

std::string kind_name(const ::testing::TestParamInfo<AcceleratorKind>& i) {
  return kAcceleratorKinds.name(i.param);
}
INSTANTIATE_TEST_SUITE_P(EveryAccelerator, PolicyOps,
                         ::testing::Values(AcceleratorKind::cpu, AcceleratorKind::cuda), kind_name);

}  // namespace
}  // namespace hb
