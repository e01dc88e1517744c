// First correctness check of decode attention against the fp64 oracle (the full matrix of
// shapes, dtypes and SIMD levels lives in attention_test.cpp).
#include <gtest/gtest.h>

#include <limits>

#include "kernels/cpu/attention.h"
#include "kernels/reference/attention_ref.h"
#include "tests/kernels/kv_fixture.h"

namespace hb {
namespace {

TEST(DecodeAttentionSmoke, MatchesReference) {
  for (int n : {0, 1, 17, 300}) {
    AttentionShape shape{8, 2, 64, DType::f16};
    auto in = test::make_paged_input(shape, n);
    PagedKvView kv = in.view();
    std::vector<float> o(8 * 64), lse(8);
    cpu::DecodeAttentionArgs a;
    a.q = in.q();
    a.kv = kv;
    a.q_heads = 8;
    a.o = o.data();
    a.lse = lse.data();
    cpu::decode_attention(&a, 1, ThreadPool::global());
    std::vector<double> ro(8 * 64), rl(8);
    ref::attention_paged(shape, in.q(), kv, ro.data(), rl.data());
    EXPECT_LT(test::rel_l2(o.data(), ro.data(), o.size()), 1e-5) << n;
    for (int h = 0; h < 8; ++h) {
      if (n == 0) EXPECT_EQ(lse[h], -std::numeric_limits<float>::infinity());
      else EXPECT_NEAR(lse[h], rl[h], 1e-4 * std::max(1.0, std::abs(rl[h])));
    }
  }
}

}  // namespace
}  // namespace hb
