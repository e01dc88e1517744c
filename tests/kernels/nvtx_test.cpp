// Host-side NVTX ranges (kernels/nvtx.h) are called from the CPU attention, top-k, gather,
// upload, merge and migration code on machines with and without a GPU or a profiler: nested
// ranges on several threads must be harmless no-ops there. Issue 16.
#include "kernels/nvtx.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace hb {
namespace {

TEST(Nvtx, NestedRangesOnManyThreadsWithoutAProfilerAreHarmless) {
  std::vector<std::thread> ts;
  int done[4] = {0, 0, 0, 0};
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&done, t] {
      for (int i = 0; i < 1000; ++i) {
        HB_NVTX_RANGE("hb.test.outer");
        HB_NVTX_RANGE("hb.test.inner");
        ++done[t];
      }
    });
  for (auto& th : ts) th.join();
  for (int d : done) EXPECT_EQ(d, 1000);
}

}  // namespace
}  // namespace hb
