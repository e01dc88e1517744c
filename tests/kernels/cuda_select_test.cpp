// The CUDA pieces of sparse and hybrid attention: logit scoring, HybridGen's logit merge
// (external top-k logits + V rows with resident KV, one softmax), row gather and Quest's
// per-page key min/max; against fp64 and the CPU engine.
#include "tests/kernels/cuda_test_util.h"

#ifdef HB_WITH_CUDA
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "core/thread_pool.h"
#include "kernels/cpu/page_meta.h"
#include "kernels/cpu/select.h"
#include "kernels/cuda/device_kv.h"
#include "tests/kernels/kv_fixture.h"

namespace hb {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

TEST(CudaScoreLogits, MatchesFp64AndTheCpuEngine) {
  HB_REQUIRE_GPU_OR_SKIP();
  auto& acc = test::gpu();
  ThreadPool pool(2);
  for (DType t : {DType::f16, DType::bf16})
    for (auto [hq, hkv, d] :
         {std::tuple{32, 8, 128}, std::tuple{14, 2, 64}, std::tuple{32, 32, 80}}) {
      const AttentionShape shape{hq, hkv, d, t};
      const int64_t n = 3000;
      const auto in = test::make_paged_input(shape, n, WorkloadSpec::Kind::structured, hq + d);
      cuda::DeviceKvCopy dev(acc, in.view());
      test::DevVec<float> q(std::vector<float>(in.q(), in.q() + static_cast<size_t>(hq) * d));
      for (auto [b, e] : {std::pair<int64_t, int64_t>{0, n}, {17, 2500}, {2999, 3000}, {64, 64}}) {
        const int64_t stride = e - b + 5;
        test::DevVec<float> lg(std::vector<float>(static_cast<size_t>(hq) * stride, -7.0f));
        acc.score_logits(q.get(), hq, dev.view(), b, e, 0, lg.get(), stride);
        acc.synchronize();
        const auto got = lg.read();
        std::vector<float> cpu_lg(static_cast<size_t>(hq) * stride, -7.0f);
        cpu::score_logits(in.q(), hq, in.view(), b, e, 0, cpu_lg.data(), stride, pool);
        for (int h = 0; h < hq; ++h) {
          for (int64_t tk = b; tk < e; ++tk) {
            const double want = test::ref_logit(in, in.q(), h, tk);
            const float g = got[h * stride + (tk - b)];
            ASSERT_NEAR(g, want, 1e-4 * std::max(1.0, std::abs(want)))
                << shape.to_string() << " h" << h << " t" << tk;
            ASSERT_NEAR(g, cpu_lg[h * stride + (tk - b)], 1e-4 * std::max(1.0, std::abs(want)))
                << "vs CPU";
          }
          for (int64_t i = e - b; i < stride; ++i)
            ASSERT_EQ(got[h * stride + i], -7.0f) << "wrote past the range";
        }
      }
    }
}

// HybridGen's step with the CPU half done by the CPU engine (scores, top-k, gather) and the
// merge on the GPU against the resident half.
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

  // GPU logit merge with the top `k` CPU tokens per head; returns the selected ids [hq][k].
  // shared_group > 1: each group of that many query heads ships the union of its rows once,
  // with a row index per entry (LogitMergeArgs::ext_rows, HybridGen's ship_rows=group).
  std::vector<int32_t> run(int64_t k, std::vector<float>& o, std::vector<float>& lse, DType link,
                           int shared_group = 1) {
    static ThreadPool pool(2);
    auto& acc = test::gpu();
    const int hq = shape.q_heads, d = shape.head_dim;
    std::vector<float> logits(static_cast<size_t>(hq) * std::max<int64_t>(split, 1));
    if (split) cpu::score_logits(q(), hq, cpu_side.view(), 0, split, 0, logits.data(), split, pool);
    k = std::clamp<int64_t>(k, 0, split);
    std::vector<int32_t> idx(hq * k);
    std::vector<float> top(hq * k);
    if (k) cpu::topk_rows(logits.data(), hq, split, split, k, idx.data(), top.data(), &pool);
    const int g = shared_group;
    std::vector<int32_t> list = idx, slots(idx.size());
    std::vector<int64_t> counts(hq, k);
    int64_t block = k;  // rows per block: k per head, or the largest group union
    if (g > 1) {
      for (int h = 0; h < hq; ++h) {  // ascending, logits alongside
        std::vector<std::pair<int32_t, float>> e;
        for (int64_t i = 0; i < k; ++i) e.emplace_back(idx[h * k + i], top[h * k + i]);
        std::sort(e.begin(), e.end());
        for (int64_t i = 0; i < k; ++i) idx[h * k + i] = e[i].first, top[h * k + i] = e[i].second;
      }
      block = 0;
      for (int b = 0; b < hq / g; ++b)
        block = std::max(block,
                         cpu::ascending_union(idx.data() + b * g * k, counts.data(), g, k,
                                              list.data() + b * g * k, slots.data() + b * g * k));
    }
    std::vector<std::byte> rows(static_cast<size_t>(block) * d * dtype_size(shape.kv_dtype));
    std::vector<float> rows_f(static_cast<size_t>(block) * d);
    std::vector<std::byte> ext_v(
        std::max<size_t>(static_cast<size_t>(hq) * k * d * dtype_size(link), 16));
    for (int blk = 0; blk < hq / g && k; ++blk) {
      int64_t n = k;
      if (g > 1)
        n = cpu::ascending_union(idx.data() + blk * g * k, counts.data(), g, k,
                                 list.data() + blk * g * k, slots.data() + blk * g * k);
      cpu::gather_rows(cpu_side.view(), shape.kv_head_of(blk * g), list.data() + blk * g * k, n,
                       rows.data());
      convert_to_fp32(shape.kv_dtype, rows.data(), rows_f.data(), static_cast<size_t>(n) * d);
      convert_from_fp32(link, rows_f.data(),
                        ext_v.data() + static_cast<size_t>(blk) * block * d * dtype_size(link),
                        static_cast<size_t>(n) * d);
    }
    // What crosses the link lands in staging memory; the local KV is resident.
    auto staging = acc.staging_memory(-1);
    Buffer lg = staging->allocate(std::max<size_t>(top.size() * 4, 4)),
           vv = staging->allocate(ext_v.size());
    std::memcpy(lg.data(), top.data(), top.size() * 4);
    std::memcpy(vv.data(), ext_v.data(), ext_v.size());
    Buffer rv = staging->allocate(std::max<size_t>(slots.size() * 4, 4));
    std::memcpy(rv.data(), slots.data(), slots.size() * 4);
    cuda::DeviceKvCopy local(acc, gpu_side.view());
    test::DevVec<float> qd(std::vector<float>(q(), q() + static_cast<size_t>(hq) * d));
    test::DevVec<float> od(std::vector<float>(static_cast<size_t>(hq) * d, 3.0f)),
        ld(std::vector<float>(hq, 3.0f));
    LogitMergeArgs a;
    a.q = qd.get();
    a.q_heads = hq;
    a.ext_logits = lg.as<float>();
    a.ext_v = vv.data();
    a.ext_dtype = link;
    a.n_ext = k;
    if (g > 1) {
      a.ext_rows = rv.as<int32_t>();
      a.ext_group = g;
      a.ext_block_rows = block;
    }
    a.local = local.view();
    a.o = od.get();
    a.lse = ld.get();
    acc.logit_merge_attention(a);
    acc.synchronize();
    o = od.read();
    lse = ld.read();
    return idx;
  }
};

TEST(CudaLogitMerge, AllTokensIsExactAttention) {
  HB_REQUIRE_GPU_OR_SKIP();
  for (DType t : {DType::f16, DType::bf16}) {
    LogitMergeCase c({32, 8, 128, t}, 3000, 2100);
    std::vector<double> ro(32 * 128), rl(32);
    ref::attention(c.shape, c.q(), c.w.prompt.k.data(), c.w.prompt.v.data(), 3000, ro.data(),
                   rl.data());
    for (DType link : {t, DType::f32}) {
      std::vector<float> o, lse;
      c.run(2100, o, lse, link);
      EXPECT_LT(test::rel_l2(o.data(), ro.data(), o.size()), 1e-4)
          << dtype_name(t) << " link " << dtype_name(link);
      for (int h = 0; h < 32; ++h)
        EXPECT_NEAR(lse[h], rl[h], 1e-4 * std::max(1.0, std::abs(rl[h])));
    }
  }
}

TEST(CudaLogitMerge, TopKIsExactAttentionOverTheSelectedTokensPlusLocal) {
  HB_REQUIRE_GPU_OR_SKIP();
  LogitMergeCase c({12, 4, 64, DType::f16}, 700, 500);
  const int d = 64;
  const int64_t k = 40;
  std::vector<float> o, lse;
  const auto idx = c.run(k, o, lse, DType::f16);
  for (int h = 0; h < 12; ++h) {
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

// A GQA group's rows shipped once, indexed per entry, give what every head's own rows give.
TEST(CudaLogitMerge, SharedGroupRowsEqualPerHeadRows) {
  HB_REQUIRE_GPU_OR_SKIP();
  LogitMergeCase c({12, 3, 64, DType::f16}, 900, 650);
  std::vector<float> o1, l1, o2, l2;
  c.run(37, o1, l1, DType::f16);
  c.run(37, o2, l2, DType::f16, 4);
  for (size_t i = 0; i < o1.size(); ++i)
    EXPECT_NEAR(o2[i], o1[i], 1e-5 * std::max(1.0f, std::abs(o1[i])));
  for (size_t h = 0; h < l1.size(); ++h)
    EXPECT_NEAR(l2[h], l1[h], 1e-5 * std::max(1.0f, std::abs(l1[h])));
}

TEST(CudaLogitMerge, EitherSideMayBeEmpty) {
  HB_REQUIRE_GPU_OR_SKIP();
  {
    LogitMergeCase c({8, 2, 64, DType::f16}, 300, 100);
    std::vector<float> o, lse;
    c.run(0, o, lse, DType::f16);
    std::vector<double> ro(8 * 64), rl(8);
    const size_t row = 2 * 64;
    ref::attention(c.shape, c.q(), c.w.prompt.k.data() + 100 * row, c.w.prompt.v.data() + 100 * row,
                   200, ro.data(), rl.data());
    EXPECT_LT(test::rel_l2(o.data(), ro.data(), o.size()), 1e-4) << "nothing external";
  }
  {
    LogitMergeCase c({8, 2, 64, DType::f16}, 300, 300);
    std::vector<float> o, lse;
    c.run(300, o, lse, DType::f16);
    std::vector<double> ro(8 * 64), rl(8);
    ref::attention(c.shape, c.q(), c.w.prompt.k.data(), c.w.prompt.v.data(), 300, ro.data(),
                   rl.data());
    EXPECT_LT(test::rel_l2(o.data(), ro.data(), o.size()), 1e-4) << "no local tokens";
  }
  {
    LogitMergeCase c({8, 2, 64, DType::f16}, 0, 0);
    std::vector<float> o, lse;
    c.run(0, o, lse, DType::f16);
    for (float x : o) EXPECT_EQ(x, 0.0f);
    for (float x : lse) EXPECT_EQ(x, kNegInf);
  }
}

// Issue 16: more query-head rows than grid.y allows (65535) still merge, every row. External
// tokens only: row h has logits {h % 7, 1} over V rows {1, 2} in every dim.
TEST(CudaLogitMerge, MoreRowsThanGridYAllows) {
  HB_REQUIRE_GPU_OR_SKIP();
  auto& acc = test::gpu();
  const int hq = 70000, d = 8;
  auto staging = acc.staging_memory(-1);
  Buffer lg = staging->allocate(static_cast<size_t>(hq) * 2 * 4);
  Buffer vv = staging->allocate(static_cast<size_t>(hq) * 2 * d * 4);
  for (int h = 0; h < hq; ++h) {
    lg.as<float>()[2 * h] = static_cast<float>(h % 7);
    lg.as<float>()[2 * h + 1] = 1.0f;
    for (int j = 0; j < d; ++j) {
      vv.as<float>()[(2 * h) * d + j] = 1.0f;
      vv.as<float>()[(2 * h + 1) * d + j] = 2.0f;
    }
  }
  test::DevVec<float> qd(std::vector<float>(static_cast<size_t>(hq) * d, 0.0f));
  test::DevVec<float> od(static_cast<size_t>(hq) * d), ld(static_cast<size_t>(hq));
  LogitMergeArgs a;
  a.q = qd.get();
  a.q_heads = hq;
  a.ext_logits = lg.as<float>();
  a.ext_v = vv.data();
  a.ext_dtype = DType::f32;
  a.n_ext = 2;
  a.local.head_dim = d;
  a.o = od.get();
  a.lse = ld.get();
  acc.logit_merge_attention(a);
  acc.synchronize();
  const auto o = od.read(), lse = ld.read();
  for (int h = 0; h < hq; h += 997) {
    const double e0 = std::exp(h % 7), e1 = std::exp(1.0);
    const double want_o = (e0 + 2 * e1) / (e0 + e1), want_lse = std::log(e0 + e1);
    ASSERT_NEAR(o[static_cast<size_t>(h) * d + 3], want_o, 1e-5) << "row " << h;
    ASSERT_NEAR(lse[h], want_lse, 1e-5) << "row " << h;
  }
  ASSERT_NEAR(
      o[static_cast<size_t>(hq - 1) * d],
      (std::exp((hq - 1) % 7) + 2 * std::exp(1.0)) / (std::exp((hq - 1) % 7) + std::exp(1.0)),
      1e-5);
}

// Issue 16: scratch (descriptors, page-table mirrors) is accelerator memory in use: a fresh
// accelerator's bytes_in_use grows past its buffers once an op has run, and stays within the
// capacity, which scratch requests are checked against.
TEST(CudaScoreLogits, ScratchAndPageTablesCountAsInUse) {
  HB_REQUIRE_GPU_OR_SKIP();
  auto acc = cuda::make_cuda_device(0, int64_t{256} << 20);
  const AttentionShape shape{8, 2, 64, DType::f16};
  const auto in = test::make_paged_input(shape, 4000, WorkloadSpec::Kind::structured, 3);
  cuda::DeviceKvCopy dev(*acc, in.view());
  Buffer q = acc->memory()->allocate(8 * 64 * 4), lg = acc->memory()->allocate(8 * 4000 * 4);
  acc->memory()->copy_in(q.data(), in.q(), 8 * 64 * 4);
  const int64_t buffers = acc->bytes_in_use();
  EXPECT_GE(buffers, dev.bytes());
  acc->score_logits(q.as<float>(), 8, dev.view(), 0, 4000, 0, lg.as<float>(), 4000);
  acc->synchronize();
  EXPECT_GT(acc->bytes_in_use(), buffers);  // the pool keeps the freed scratch
  EXPECT_LE(acc->bytes_in_use(), acc->info().capacity_bytes);
}

TEST(CudaGatherRows, MatchesTheCpuGatherAndZeroesOutOfRangeTokens) {
  HB_REQUIRE_GPU_OR_SKIP();
  auto& acc = test::gpu();
  for (DType t : {DType::f16, DType::bf16, DType::f32}) {
    const AttentionShape shape{8, 2, 80, t};
    const auto in = test::make_paged_input(shape, 100);
    cuda::DeviceKvCopy dev(acc, in.view());
    const std::vector<int32_t> tokens{99, 0, 17, 16, 42, 42, 63, 100, -1};  // last two out of range
    const size_t es = dtype_size(t), n = tokens.size(), valid = n - 2;
    test::DevVec<int32_t> tk(tokens);
    for (int h = 0; h < 2; ++h) {
      test::DevVec<std::byte> v(n * 80 * es), k(n * 80 * es);
      acc.gather_rows(dev.view(), h, tk.get(), static_cast<int64_t>(n), v.get(), k.get());
      acc.synchronize();
      const auto gv = v.read(), gk = k.read();
      std::vector<std::byte> cv(valid * 80 * es), ck(valid * 80 * es);
      cpu::gather_rows(in.view(), h, tokens.data(), static_cast<int64_t>(valid), cv.data(),
                       ck.data());
      EXPECT_EQ(std::memcmp(gv.data(), cv.data(), cv.size()), 0)
          << dtype_name(t) << " V head " << h;
      EXPECT_EQ(std::memcmp(gk.data(), ck.data(), ck.size()), 0)
          << dtype_name(t) << " K head " << h;
      for (size_t i = valid * 80 * es; i < gv.size(); ++i) {
        ASSERT_EQ(gv[i], std::byte{0});
        ASSERT_EQ(gk[i], std::byte{0});
      }
    }
  }
}

TEST(CudaPageMinMax, ElementwiseOverEachPagesValidTokens) {
  HB_REQUIRE_GPU_OR_SKIP();
  auto& acc = test::gpu();
  for (int page : {16, 32}) {
    const AttentionShape shape{8, 2, 64, DType::bf16};
    const int64_t n = 1000 + 5;  // last page partly filled
    const auto in = test::make_paged_input(shape, n, WorkloadSpec::Kind::structured, 1, page);
    cuda::DeviceKvCopy dev(acc, in.view());
    const int64_t pages = (n + page - 1) / page, stride = pages + 2;
    test::DevVec<float> mn(2 * stride * 64), mx(2 * stride * 64);
    acc.page_minmax(dev.view(), mn.get(), mx.get(), stride);
    acc.synchronize();
    const auto gmn = mn.read(), gmx = mx.read();
    for (int h = 0; h < 2; ++h)
      for (int64_t p = 0; p < pages; ++p)
        for (int j = 0; j < 64; ++j) {
          float lo = INFINITY, hi = -INFINITY;
          for (int64_t t = p * page; t < std::min(n, (p + 1) * page); ++t) {
            lo = std::min(lo, in.w.prompt.k_row(t, h)[j]);
            hi = std::max(hi, in.w.prompt.k_row(t, h)[j]);
          }
          ASSERT_EQ(gmn[(h * stride + p) * 64 + j], lo)
              << "head " << h << " page " << p << " dim " << j;
          ASSERT_EQ(gmx[(h * stride + p) * 64 + j], hi)
              << "head " << h << " page " << p << " dim " << j;
        }
    for (int h = 0; h < 2; ++h)  // and the CPU engine's Quest box, page by page
      for (int64_t p = 0; p < pages; ++p) {
        std::vector<float> cmn(64), cmx(64);
        cpu::page_box(in.view(), h, p, cmn.data(), cmx.data());
        for (int j = 0; j < 64; ++j) {
          ASSERT_EQ(gmn[(h * stride + p) * 64 + j], cmn[j])
              << "vs CPU, head " << h << " page " << p;
          ASSERT_EQ(gmx[(h * stride + p) * 64 + j], cmx[j])
              << "vs CPU, head " << h << " page " << p;
        }
      }
  }
}

}  // namespace
}  // namespace hb
#else
TEST(CudaSelect, SkippedWithoutCuda) {
  GTEST_SKIP() << "built without CUDA (HYBRIDBENCH_CUDA=OFF)";
}
#endif
