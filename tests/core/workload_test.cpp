#include "core/workload.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <gtest/gtest.h>

#include "core/error.h"
#include "tests/core/attention_probs.h"

namespace hb {
namespace {

TEST(Workload, DeterministicForASeed) {
  const AttentionShape shape{8, 2, 64, DType::f16};
  auto a = make_workload(shape, 300, 3, WorkloadSpec{});
  auto b = make_workload(shape, 300, 3, WorkloadSpec{});
  EXPECT_EQ(a.prompt.k, b.prompt.k);
  EXPECT_EQ(a.steps[2].q, b.steps[2].q);
  WorkloadSpec other;
  other.seed = 7;
  EXPECT_NE(make_workload(shape, 300, 3, other).prompt.k, a.prompt.k);
}

TEST(Workload, StructuredAttentionHasSinksRecencyAndIsConcentrated) {
  const AttentionShape shape{8, 2, 128, DType::f16};
  const int64_t n = 4096;
  auto w = make_workload(shape, n, 1, WorkloadSpec{});
  // Score over the prompt with the first decode query.
  double sink = 0, recent = 0, top_mass = 0;
  for (int qh = 0; qh < shape.q_heads; ++qh) {
    auto p = probs(w, w.steps[0].q.data(), qh, n, w.prompt);
    for (int t = 0; t < 4; ++t) sink += p[t];
    for (int64_t t = n - 64; t < n; ++t) recent += p[t];
    std::sort(p.begin(), p.end(), std::greater<>());
    top_mass += std::accumulate(p.begin(), p.begin() + n / 10, 0.0);
  }
  sink /= shape.q_heads;
  recent /= shape.q_heads;
  top_mass /= shape.q_heads;
  // Uniform attention would give 4/4096 ~ 0.001 to the sinks and 64/4096 ~ 0.016 to the window.
  EXPECT_GT(sink, 0.05);
  EXPECT_GT(recent, 0.05);
  EXPECT_GT(top_mass,
            0.5);  // the top 10% of tokens hold most of the mass (sparse, like real models)
}

TEST(Workload, UniformIsNearlyFlat) {
  const AttentionShape shape{4, 4, 64, DType::f32};
  WorkloadSpec spec;
  spec.kind = WorkloadSpec::Kind::uniform;
  auto w = make_workload(shape, 2048, 1, spec);
  auto p = probs(w, w.steps[0].q.data(), 0, 2048, w.prompt);
  std::sort(p.begin(), p.end(), std::greater<>());
  EXPECT_LT(std::accumulate(p.begin(), p.begin() + 205, 0.0), 0.4);
}

TEST(Workload, NeedleDominatesAttention) {
  const AttentionShape shape{4, 2, 128, DType::f16};
  WorkloadSpec spec;
  spec.kind = WorkloadSpec::Kind::needle;
  spec.needle_position = 0.25f;
  auto w = make_workload(shape, 1000, 2, spec);
  ASSERT_EQ(w.needle_token, 250);
  for (int qh = 0; qh < shape.q_heads; ++qh) {
    auto p = probs(w, w.steps[1].q.data(), qh, 1000, w.prompt);
    EXPECT_GT(p[250], 0.5) << "head " << qh;
  }
}

TEST(Workload, QueriesDriftButStayCorrelated) {
  const AttentionShape shape{4, 2, 64, DType::f16};
  auto w = make_workload(shape, 100, 8, WorkloadSpec{});
  auto cos = [](const std::vector<float>& a, const std::vector<float>& b) {
    double ab = 0, aa = 0, bb = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      ab += a[i] * b[i];
      aa += a[i] * a[i];
      bb += b[i] * b[i];
    }
    return ab / std::sqrt(aa * bb);
  };
  const double c = cos(w.steps[0].q, w.steps[1].q);
  EXPECT_GT(c, 0.7);
  EXPECT_LT(c, 0.99999);
}

TEST(Workload, EdgeSizesAndErrors) {
  const AttentionShape shape{2, 1, 16, DType::f16};
  auto w = make_workload(shape, 0, 1, WorkloadSpec{});
  EXPECT_EQ(w.prompt_len(), 0);
  EXPECT_EQ(w.steps.size(), 1u);
  EXPECT_THROW(make_workload(shape, -1, 1, WorkloadSpec{}), Error);
  EXPECT_THROW(parse_workload_kind("zipf"), Error);
  EXPECT_THROW(make_workload(AttentionShape{2, 1, 2, DType::f16}, 10, 1, WorkloadSpec{}), Error);
}

}  // namespace
}  // namespace hb
