// LSE merge: against a direct computation, with empty partials, aliasing and reordering.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/rng.h"
#include "kernels/cpu/merge.h"

namespace hb {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

struct Parts {
  int n, heads, d;
  std::vector<std::vector<float>> o, lse;
  std::vector<const float*> op, lp;
  Parts(int n_, int heads_, int d_, uint64_t seed) : n(n_), heads(heads_), d(d_), o(n_), lse(n_) {
    Rng rng(seed);
    for (int i = 0; i < n; ++i) {
      o[i].resize(static_cast<size_t>(heads) * d);
      lse[i].resize(heads);
      for (auto& x : o[i]) x = rng.normal();
      for (auto& x : lse[i]) x = 30.0f * rng.normal();  // far apart: exercises the max shift
    }
    refresh();
  }
  void refresh() {
    op.clear();
    lp.clear();
    for (int i = 0; i < n; ++i) {
      op.push_back(o[i].data());
      lp.push_back(lse[i].data());
    }
  }
  void make_empty(int i) {
    std::fill(o[i].begin(), o[i].end(), 0.0f);
    std::fill(lse[i].begin(), lse[i].end(), kNegInf);
  }
};

// fp64: o = sum exp(lse_i) o_i / sum exp(lse_i), lse = log sum exp(lse_i).
void expected(const Parts& p, int h, std::vector<double>& o, double& lse) {
  double M = -INFINITY;
  for (int i = 0; i < p.n; ++i) M = std::max(M, double(p.lse[i][h]));
  o.assign(p.d, 0.0);
  if (M == -INFINITY) {
    lse = M;
    return;
  }
  double w = 0;
  for (int i = 0; i < p.n; ++i) {
    const double wi = std::exp(double(p.lse[i][h]) - M);
    w += wi;
    for (int j = 0; j < p.d; ++j) o[j] += wi * p.o[i][h * p.d + j];
  }
  for (auto& x : o) x /= w;
  lse = M + std::log(w);
}

void check(const Parts& p, const std::vector<float>& o, const std::vector<float>& lse) {
  for (int h = 0; h < p.heads; ++h) {
    std::vector<double> eo;
    double el;
    expected(p, h, eo, el);
    if (std::isinf(el)) {
      EXPECT_EQ(lse[h], kNegInf);
    } else {
      EXPECT_NEAR(lse[h], el, 1e-5 * std::max(1.0, std::abs(el)));
    }
    for (int j = 0; j < p.d; ++j) {
      ASSERT_FALSE(std::isnan(o[h * p.d + j]));
      EXPECT_NEAR(o[h * p.d + j], eo[j], 1e-5);  // |o| ~ 1: fp32 weights and sums
    }
  }
}

TEST(MergePartials, MatchesDirectComputation) {
  for (int n : {1, 2, 3, 7}) {
    Parts p(n, 5, 80, n);
    std::vector<float> o(5 * 80), lse(5);
    cpu::merge_partials(n, p.op.data(), p.lp.data(), 5, 80, o.data(), lse.data());
    check(p, o, lse);
  }
}

TEST(MergePartials, EmptyPartsAreNeutralAndAllEmptyIsNeutralNotNaN) {
  Parts p(4, 3, 64, 9);
  p.make_empty(0);  // an empty first part (the aliasing slot) too
  p.make_empty(2);
  std::vector<float> o(3 * 64), lse(3);
  cpu::merge_partials(4, p.op.data(), p.lp.data(), 3, 64, o.data(), lse.data());
  check(p, o, lse);
  for (int i = 0; i < 4; ++i) p.make_empty(i);
  cpu::merge_partials(4, p.op.data(), p.lp.data(), 3, 64, o.data(), lse.data());
  for (float x : o) EXPECT_EQ(x, 0.0f);
  for (float x : lse) EXPECT_EQ(x, kNegInf);
}

TEST(MergePartials, OutputMayAliasTheFirstPart) {
  Parts p(3, 4, 64, 5);
  std::vector<float> o(4 * 64), lse(4);
  cpu::merge_partials(3, p.op.data(), p.lp.data(), 4, 64, o.data(), lse.data());
  Parts q = p;
  q.refresh();
  cpu::merge_partials(3, q.op.data(), q.lp.data(), 4, 64, q.o[0].data(), q.lse[0].data());
  EXPECT_EQ(q.o[0], o);
  EXPECT_EQ(q.lse[0], lse);
}

TEST(MergePartials, AssociativeUpToRounding) {
  // merge(merge(a, b), c) == merge(a, b, c): what lets partials be merged in stages
  // (CPU splits first, then CPU with GPU).
  Parts p(3, 2, 64, 13);
  std::vector<float> all(2 * 64), all_lse(2), ab(2 * 64), ab_lse(2), abc(2 * 64), abc_lse(2);
  cpu::merge_partials(3, p.op.data(), p.lp.data(), 2, 64, all.data(), all_lse.data());
  cpu::merge_partials(2, p.op.data(), p.lp.data(), 2, 64, ab.data(), ab_lse.data());
  const float* o2[2] = {ab.data(), p.o[2].data()};
  const float* l2[2] = {ab_lse.data(), p.lse[2].data()};
  cpu::merge_partials(2, o2, l2, 2, 64, abc.data(), abc_lse.data());
  for (size_t i = 0; i < all.size(); ++i) EXPECT_NEAR(abc[i], all[i], 1e-6);
  for (int h = 0; h < 2; ++h) EXPECT_NEAR(abc_lse[h], all_lse[h], 1e-5 * std::abs(all_lse[h]));
}

}  // namespace
}  // namespace hb
