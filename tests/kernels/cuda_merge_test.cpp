// The CUDA LSE merge: against fp64 and the CPU merge, with empty partials (never NaN), more
// parts than one launch takes, in-place output, and GPU + "CPU" halves of one attention.
#include "tests/kernels/cuda_test_util.h"

#ifdef HB_WITH_CUDA
#include <cmath>
#include <limits>

#include "core/rng.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/merge.h"
#include "kernels/cuda/device_kv.h"
#include "tests/kernels/kv_fixture.h"

namespace hb {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// n random partials [heads][d] (lse far apart), some rows or whole parts empty.
struct Parts {
  int n, heads, d;
  std::vector<std::vector<float>> o, lse;
  Parts(int n_, int heads_, int d_, uint64_t seed) : n(n_), heads(heads_), d(d_), o(n_), lse(n_) {
    Rng rng(seed);
    for (int i = 0; i < n; ++i) {
      o[i].resize(static_cast<size_t>(heads) * d);
      lse[i].resize(heads);
      for (auto& x : o[i]) x = rng.normal();
      for (auto& x : lse[i]) x = 30.0f * rng.normal();
    }
  }
  void empty_part(int i) {
    std::fill(o[i].begin(), o[i].end(), 0.0f);
    std::fill(lse[i].begin(), lse[i].end(), kNegInf);
  }
  void empty_row(int h) {  // every part empty for head h
    for (int i = 0; i < n; ++i) {
      lse[i][h] = kNegInf;
      std::fill(o[i].begin() + h * d, o[i].begin() + (h + 1) * d, 0.0f);
    }
  }
};

struct Merged {
  std::vector<float> o, lse;
};

Merged gpu_merge(const Parts& p, bool in_place = false) {
  auto& acc = test::gpu();
  std::vector<test::DevVec<float>> o, l;
  std::vector<const float*> op, lp;
  for (int i = 0; i < p.n; ++i) {
    o.emplace_back(p.o[i]);
    l.emplace_back(p.lse[i]);
    op.push_back(o.back().get());
    lp.push_back(l.back().get());
  }
  test::DevVec<float> oo(std::vector<float>(static_cast<size_t>(p.heads) * p.d, 5.0f)),
      lo(std::vector<float>(p.heads, 5.0f));
  float* out_o = in_place && p.n ? o[0].get() : oo.get();
  float* out_l = in_place && p.n ? l[0].get() : lo.get();
  acc.merge_partials(p.n, op.data(), lp.data(), p.heads, p.d, out_o, out_l);
  acc.synchronize();
  if (in_place && p.n) return {o[0].read(), l[0].read()};
  return {oo.read(), lo.read()};
}

Merged cpu_merge(const Parts& p) {
  std::vector<const float*> op, lp;
  for (int i = 0; i < p.n; ++i) {
    op.push_back(p.o[i].data());
    lp.push_back(p.lse[i].data());
  }
  Merged m{std::vector<float>(static_cast<size_t>(p.heads) * p.d), std::vector<float>(p.heads)};
  cpu::merge_partials(p.n, op.data(), lp.data(), p.heads, p.d, m.o.data(), m.lse.data());
  return m;
}

// fp64 merge of head h.
void expected(const Parts& p, int h, std::vector<double>& o, double& lse) {
  double M = -INFINITY;
  for (int i = 0; i < p.n; ++i) M = std::max(M, double(p.lse[i][h]));
  o.assign(p.d, 0.0);
  lse = M;
  if (M == -INFINITY) return;
  double w = 0;
  for (int i = 0; i < p.n; ++i) {
    const double wi = std::exp(double(p.lse[i][h]) - M);
    w += wi;
    for (int j = 0; j < p.d; ++j) o[j] += wi * p.o[i][h * p.d + j];
  }
  for (auto& x : o) x /= w;
  lse = M + std::log(w);
}

void check(const Parts& p, const Merged& m, const std::string& what) {
  const Merged c = cpu_merge(p);
  for (int h = 0; h < p.heads; ++h) {
    std::vector<double> eo;
    double el;
    expected(p, h, eo, el);
    if (std::isinf(el)) {
      EXPECT_EQ(m.lse[h], kNegInf) << what;
    } else {
      EXPECT_NEAR(m.lse[h], el, 1e-5 * std::max(1.0, std::abs(el))) << what;
      EXPECT_NEAR(m.lse[h], c.lse[h], 1e-5 * std::max(1.0f, std::abs(c.lse[h])))
          << what << " vs CPU";
    }
    for (int j = 0; j < p.d; ++j) {
      ASSERT_FALSE(std::isnan(m.o[h * p.d + j])) << what;
      ASSERT_NEAR(m.o[h * p.d + j], eo[j], 1e-5) << what << " head " << h;
      ASSERT_NEAR(m.o[h * p.d + j], c.o[h * p.d + j], 1e-5) << what << " head " << h << " vs CPU";
    }
  }
}

TEST(CudaMergePartials, MatchesFp64AndTheCpuMerge) {
  HB_REQUIRE_GPU_OR_SKIP();
  for (int n : {1, 2, 3, 16, 17, 40})
    for (int d : {64, 80, 128}) {
      const Parts p(n, 64 * 4, d, n * 100 + d);  // batch 64 of 4-head rows... any row count
      check(p, gpu_merge(p), "n=" + std::to_string(n) + " d=" + std::to_string(d));
    }
}

TEST(CudaMergePartials, EmptyPartsAreNeutralAndAllEmptyIsNotNaN) {
  HB_REQUIRE_GPU_OR_SKIP();
  Parts p(3, 32, 128, 7);
  p.empty_part(1);
  p.empty_row(5);
  p.o[1][0] = std::nanf("");  // an empty part's o is never read
  check(p, gpu_merge(p), "with empty parts");
  Parts none(0, 32, 128, 8);
  const Merged m = gpu_merge(none);
  for (float x : m.o) EXPECT_EQ(x, 0.0f);
  for (float x : m.lse) EXPECT_EQ(x, kNegInf);
  Parts all(2, 8, 64, 9);
  all.empty_part(0);
  all.empty_part(1);
  const Merged e = gpu_merge(all);
  for (float x : e.o) EXPECT_EQ(x, 0.0f);
  for (float x : e.lse) EXPECT_EQ(x, kNegInf);
}

TEST(CudaMergePartials, OutputMayAliasTheFirstPart) {
  HB_REQUIRE_GPU_OR_SKIP();
  for (int n : {2, 20}) {
    const Parts p(n, 48, 128, 11 + n);
    check(p, gpu_merge(p, /*in_place=*/true), "in place, n=" + std::to_string(n));
  }
}

// The hybrid split: GPU attention over tokens [0, m) and [m, n) (the "CPU" half), merged on
// the GPU, equals attention over all n tokens.
TEST(CudaMergePartials, MergedHalvesEqualTheWhole) {
  HB_REQUIRE_GPU_OR_SKIP();
  auto& acc = test::gpu();
  const AttentionShape shape{32, 8, 128, DType::f16};
  const int64_t n = 5000, m = 3333;
  const auto in = test::make_paged_input(shape, n, WorkloadSpec::Kind::structured, 4);
  cuda::DeviceKvCopy dev(acc, in.view());
  const size_t qn = static_cast<size_t>(shape.q_heads) * shape.head_dim;
  test::DevVec<float> q(std::vector<float>(in.q(), in.q() + qn)), o0(qn), o1(qn), l0(32), l1(32);
  DecodeAttentionArgs a[2];
  for (int i = 0; i < 2; ++i) {
    a[i].q = q.get();
    a[i].kv = dev.view();
    a[i].q_heads = shape.q_heads;
    a[i].token_begin = i == 0 ? 0 : m;
    a[i].token_end = i == 0 ? m : n;
    a[i].o = (i == 0 ? o0 : o1).get();
    a[i].lse = (i == 0 ? l0 : l1).get();
  }
  acc.decode_attention(a, 2);
  const float* op[2] = {o0.get(), o1.get()};
  const float* lp[2] = {l0.get(), l1.get()};
  acc.merge_partials(2, op, lp, shape.q_heads, shape.head_dim, o0.get(), l0.get());
  acc.synchronize();
  const auto want = test::reference(in, 0, n);
  const auto o = o0.read();
  const auto lse = l0.read();
  EXPECT_LT(test::rel_l2(o.data(), want.o.data(), o.size()), 1e-4);
  for (int h = 0; h < shape.q_heads; ++h)
    EXPECT_NEAR(lse[h], want.lse[h], 1e-4 * std::max(1.0, std::abs(want.lse[h])));
}

}  // namespace
}  // namespace hb
#else
TEST(CudaMergePartials, SkippedWithoutCuda) {
  GTEST_SKIP() << "built without CUDA (HYBRIDBENCH_CUDA=OFF)";
}
#endif
