// The layer GEMV (kernels/cpu/layer_gemv.h) against an fp64 reference over the weights as
// stored, at every SIMD level this CPU has, on edge shapes: empty, one element, widths that are
// not multiples of the vector width or of a weight block, and more rows than one engine job.
#include "kernels/cpu/layer_gemv.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/rng.h"
#include "tests/kernels/kv_fixture.h"

namespace hb {
namespace {

struct Case {
  int in, out, rows;
};

// Largest |y - ref| relative to the reference's scale sum_i |x_i W_ic| (fp32 accumulation).
double worst_error(const cpu::BlockedWeights& w, const std::vector<float>& x, int rows,
                   const std::vector<float>& y) {
  double worst = 0;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < w.out; ++c) {
      double ref = 0, scale = 0;
      for (int i = 0; i < w.in; ++i) {
        const double t = static_cast<double>(x[static_cast<size_t>(r) * w.in + i]) * w.at(i, c);
        ref += t;
        scale += std::fabs(t);
      }
      const double got = y[static_cast<size_t>(r) * w.out + c];
      worst = std::max(worst, std::fabs(got - ref) / std::max(scale, 1e-30));
    }
  return worst;
}

TEST(LayerGemv, MatchesFp64ReferenceOnEdgeShapesAtEveryLevel) {
  const Case cases[] = {{1, 1, 1},   {16, 64, 1}, {17, 65, 3},   {64, 130, 5},
                        {96, 16, 4}, {128, 1, 2}, {896, 200, 2}, {48, 70, 300}};
  ThreadPool pool(2);
  for (DType dt : {DType::f16, DType::bf16, DType::f32})
    for (const Case& c : cases) {
      std::vector<std::byte> storage(cpu::BlockedWeights::bytes(c.in, c.out, dt));
      auto w = cpu::BlockedWeights::over(storage.data(), c.in, c.out, dt);
      w.fill_random(c.in * 1000 + c.out);
      Rng rng(c.rows);
      std::vector<float> x(static_cast<size_t>(c.rows) * c.in);
      for (float& v : x) v = rng.uniformf(-2, 2);
      for (SimdLevel l : test::available_levels()) {
        std::vector<float> y(static_cast<size_t>(c.rows) * c.out, NAN);
        cpu::gemv(w, x.data(), c.rows, y.data(), pool, l);
        EXPECT_LT(worst_error(w, x, c.rows, y), 1e-5)
            << dtype_name(dt) << " in " << c.in << " out " << c.out << " rows " << c.rows << " "
            << simd_level_name(l);
      }
    }
}

TEST(LayerGemv, StructuredWeightsGiveKnownSums) {
  // W[i][c] = 1 where i == c % in: y[r][c] = x[r][c % in], exact in every dtype.
  const int in = 33, out = 100, rows = 3;
  std::vector<std::byte> storage(cpu::BlockedWeights::bytes(in, out, DType::f16));
  auto w = cpu::BlockedWeights::over(storage.data(), in, out, DType::f16);
  for (int i = 0; i < in; ++i)
    for (int c = 0; c < out; ++c) w.set(i, c, i == c % in ? 1.0f : 0.0f);
  std::vector<float> x(rows * in);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) - 40;
  ThreadPool pool(1);
  for (SimdLevel l : test::available_levels()) {
    std::vector<float> y(rows * out, NAN);
    cpu::gemv(w, x.data(), rows, y.data(), pool, l);
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < out; ++c) ASSERT_EQ(y[r * out + c], x[r * in + c % in]) << r << "," << c;
  }
}

TEST(LayerGemv, EmptyShapesWriteZerosOrNothing) {
  ThreadPool pool(1);
  std::vector<std::byte> storage(cpu::BlockedWeights::bytes(0, 5, DType::f16) + 1);
  auto w = cpu::BlockedWeights::over(storage.data(), 0, 5, DType::f16);
  std::vector<float> y(10, NAN);
  cpu::gemv(w, nullptr, 2, y.data(), pool);
  for (float v : y) EXPECT_EQ(v, 0.0f);
  auto none = cpu::BlockedWeights::over(storage.data(), 4, 0, DType::f16);
  cpu::gemv(none, nullptr, 2, nullptr, pool);  // nothing to write
  cpu::gemv(w, nullptr, 0, nullptr, pool);     // no rows
}

}  // namespace
}  // namespace hb
