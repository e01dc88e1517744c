// The compute roof (kernels/cpu/compute_roof.h) runs for every SIMD level this CPU has, every
// cache dtype and the head shapes the engine covers, and yields a usable figure. Its size is a
// benchmark's business (BM_ComputeRoof, BM_AttentionVsStream), so no speed is asserted here.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/cpu/compute_roof.h"
#include "tests/kernels/kv_fixture.h"

namespace hb {
namespace {

TEST(ComputeRoof, EveryLevelDtypeAndShapeGivesAFinitePositiveRate) {
  for (SimdLevel l : test::available_levels())
    for (DType t : {DType::f32, DType::f16, DType::bf16})
      for (auto [group, d] : {std::pair{4, 128}, {1, 64}, {3, 80}, {8, 72}}) {
        const double gbps = cpu::compute_roof_gbps(l, t, group, d);
        EXPECT_TRUE(std::isfinite(gbps) && gbps > 0)
            << simd_level_name(l) << " " << dtype_name(t) << " group " << group << " d " << d;
      }
}

}  // namespace
}  // namespace hb
