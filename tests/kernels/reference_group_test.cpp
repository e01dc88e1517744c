// The runner's reference computes a KV head's query group in one pass (ref::attention_group):
// it must give attention_head's and probabilities_head's figures to the bit, or accuracy figures
// would move with an optimisation.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "kernels/reference/attention_ref.h"

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

}  // namespace
}  // namespace hb
