// Host-side planning of the CUDA backend (split counts, page-table deltas, copy coalescing)
// and the softmax formulas the kernels share. These need no GPU, so they run everywhere the
// CUDA backend is compiled, including CI.
#include "tests/kernels/cuda_test_util.h"

#ifdef HB_WITH_CUDA
#include <cmath>
#include <cstddef>
#include <limits>

#include "core/error.h"
#include "kernels/cuda/device_info.h"
#include "kernels/cuda/kernel_args.h"
#include "kernels/cuda/launch_plan.h"
#include "kernels/cuda/softmax_math.h"

namespace hb::cuda {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
using Span = std::pair<int64_t, int64_t>;

TEST(CudaPlan, ClampRangeAndTiles) {
  EXPECT_EQ(clamp_range(0, -1, 100).end, 100);
  EXPECT_EQ(clamp_range(5, 50, 30).end, 30);
  EXPECT_TRUE(clamp_range(40, 50, 30).empty());
  EXPECT_EQ(tiles_covering(TokenRange{0, 0}, 64), 0);
  EXPECT_EQ(tiles_covering(TokenRange{0, 1}, 64), 1);
  EXPECT_EQ(tiles_covering(TokenRange{63, 65}, 64), 2);
  EXPECT_EQ(tiles_covering(TokenRange{64, 128}, 64), 1);
  EXPECT_EQ(tiles_covering(TokenRange{0, 4099}, 64), 65);
}

TEST(CudaPlan, SplitsFillOneWaveAndCoverEveryTile) {
  // Llama-3.1-8B on an H200-like part: 132 SMs x 3 resident CTAs.
  const int64_t resident = 132 * 3;
  for (int64_t tiles : {1, 2, 3, 128, 512, 2048})
    for (int64_t rows : {8, 128, 512, 4096}) {
      const SplitPlan p = plan_splits(tiles, rows, resident);
      EXPECT_GE(int64_t{p.splits} * p.tiles_per_split, tiles)
          << tiles << " " << rows;  // covers all
      EXPECT_LT(int64_t{p.splits - 1} * p.tiles_per_split, tiles)
          << tiles << " " << rows;  // no empty split
      EXPECT_LE(rows * p.splits, std::max<int64_t>(resident, rows))
          << tiles << " " << rows;  // one wave
      if (tiles >= 2) {
        EXPECT_GE(p.tiles_per_split, 2) << tiles << " " << rows;
      }
    }
  const SplitPlan b1 = plan_splits(512, 8, resident);  // 32K tokens, batch 1
  EXPECT_GE(b1.splits * 8, resident * 9 / 10);
  EXPECT_EQ(plan_splits(0, 8, resident).splits, 1);
}

TEST(CudaPlan, ChangedRangeFindsExactlyTheEditedEntries) {
  std::vector<std::byte> mem(1 << 20);
  std::vector<PageRef> a(1000);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = PageRef{mem.data() + 32 * i, mem.data() + 32 * i + 16};
  auto b = a;
  EXPECT_EQ(changed_range(a.data(), 1000, b.data(), 1000), Span(1000, 1000));
  b[517].v += 64;
  EXPECT_EQ(changed_range(a.data(), 1000, b.data(), 1000), Span(517, 518));
  b[3].k += 64;
  b[900].k += 64;
  EXPECT_EQ(changed_range(a.data(), 1000, b.data(), 1000), Span(3, 901));
  // Growth: the new entries (and any edited before them) are uploaded.
  EXPECT_EQ(changed_range(a.data(), 990, a.data(), 1000), Span(990, 1000));
  EXPECT_EQ(changed_range(a.data(), 990, b.data(), 1000), Span(3, 1000));
  // Shrink: nothing to upload when the prefix is unchanged.
  EXPECT_EQ(changed_range(a.data(), 1000, a.data(), 10), Span(10, 10));
  EXPECT_EQ(changed_range(nullptr, 0, a.data(), 5), Span(0, 5));
}

TEST(CudaPlan, CopyRunsCoalesceHostContiguousBlocks) {
  constexpr size_t kBlock = 4096;
  std::vector<std::byte> mem(64 * kBlock);
  auto blk = [&](int i) { return static_cast<const std::byte*>(mem.data() + i * kBlock); };
  // Pages of 2 heads appended interleaved (head 0 page 0, head 1 page 0, ...), K arena then V.
  std::vector<const std::byte*> blocks = {blk(0), blk(32), blk(1), blk(33),
                                          blk(2), blk(34), blk(3), blk(35)};
  const CopyPlan p = plan_copy_runs(blocks, kBlock);
  ASSERT_EQ(p.slots, 8u);
  ASSERT_EQ(p.runs.size(), 2u);
  EXPECT_EQ(p.runs[0].src, blk(0));
  EXPECT_EQ(p.runs[0].blocks, 4u);
  EXPECT_EQ(p.runs[1].src, blk(32));
  EXPECT_EQ(p.runs[1].first_slot, 4u);
  for (size_t i = 0; i < blocks.size(); ++i) {  // every block lands where its run puts it
    bool found = false;
    for (const auto& r : p.runs)
      if (blocks[i] >= r.src && blocks[i] < r.src + r.blocks * kBlock) {
        EXPECT_EQ(p.slot_of[i], r.first_slot + static_cast<size_t>(blocks[i] - r.src) / kBlock);
        found = true;
      }
    EXPECT_TRUE(found);
  }
  // A block named twice is copied once and shares its slot.
  const CopyPlan d = plan_copy_runs(std::vector<const std::byte*>{blk(5), blk(9), blk(5)}, kBlock);
  EXPECT_EQ(d.slots, 2u);
  EXPECT_EQ(d.slot_of[0], d.slot_of[2]);
  EXPECT_TRUE(plan_copy_runs({}, kBlock).runs.empty());
}

TEST(CudaPlan, StreamChunksAreWholePagesAndTiles) {
  EXPECT_EQ(stream_chunk_tokens(1000, 16, 64), 1024);
  EXPECT_EQ(stream_chunk_tokens(1, 16, 64), 64);
  EXPECT_EQ(stream_chunk_tokens(4096, 48, 64), 4224);  // lcm(48, 64) = 192
  EXPECT_EQ(stream_chunk_tokens(100, 128, 64), 128);
}

TEST(CudaPlan, GmaxCoversEveryGroupSize) {
  EXPECT_EQ(decode_gmax(1), 1);
  EXPECT_EQ(decode_gmax(2), 2);
  EXPECT_EQ(decode_gmax(4), 4);
  EXPECT_EQ(decode_gmax(5), 8);
  EXPECT_EQ(decode_gmax(7), 8);
  EXPECT_EQ(decode_gmax(16), 8);  // two head chunks
}

TEST(CudaSoftmaxMath, EmptyStatesStayNeutral) {
  EXPECT_EQ(exp_shifted(-kInf, -kInf), 0.0f);  // all-masked set: no NaN
  EXPECT_EQ(exp_shifted(-kInf, 3.0f), 0.0f);
  EXPECT_NEAR(exp_shifted(1.0f, 3.0f), std::exp(-2.0f), 1e-6f);
  EXPECT_EQ(rescale_factor(-kInf, -kInf), 1.0f);
  EXPECT_EQ(rescale_factor(-kInf, 2.0f), 0.0f);
  EXPECT_NEAR(rescale_factor(1.0f, 2.0f), std::exp(-1.0f), 1e-6f);
  EXPECT_EQ(finish_lse(-kInf, 0.0f), -kInf);
  EXPECT_NEAR(finish_lse(2.0f, std::exp(1.0f)), 3.0f, 1e-6f);
}

// Issue 16: grids past CUDA's limits are refused on the host, with the reason, rather than
// failing to launch; rows on x may exceed 65535 (logit_merge.cu's query heads).
TEST(CudaPlan, GridLimitsAreCheckedBeforeLaunch) {
  EXPECT_NO_THROW(check_grid(70000, 4, 1, "rows on x"));
  EXPECT_NO_THROW(check_grid(kMaxGridX, kMaxGridYZ, kMaxGridYZ, "largest"));
  EXPECT_THROW(check_grid(4, 70000, 1, "rows on y"), Error);
  EXPECT_THROW(check_grid(1, 1, 65536, "batch on z"), Error);
  EXPECT_THROW(check_grid(0, 1, 1, "empty"), Error);
  EXPECT_THROW(check_grid(kMaxGridX + 1, 1, 1, "too many rows"), Error);
}

// Issue 16: host_pointer_access is checked, not just collected: a device whose kernels cannot
// dereference registered host pointers is refused with the reason (as is one without pools).
TEST(CudaDeviceInfo, DevicesKernelsCannotServeAreRefusedWithTheReason) {
  DeviceInfo d;
  d.index = 1;
  d.name = "Test GPU";
  d.host_pointer_access = true;
  d.memory_pools = true;
  EXPECT_EQ(unsupported_reason(d), "");
  d.host_pointer_access = false;
  EXPECT_NE(unsupported_reason(d).find("host pointers"), std::string::npos)
      << unsupported_reason(d);
  d.host_pointer_access = true;
  d.memory_pools = false;
  EXPECT_NE(unsupported_reason(d).find("cudaMallocAsync"), std::string::npos);
}

// Issue 16: scratch (descriptors, partials, page-table mirrors) counts against the capacity: the
// pool's reserved memory always, and growth beyond its free part when more is asked for.
TEST(CudaPlan, ScratchCountsAgainstTheCapacity) {
  EXPECT_TRUE(scratch_fits(0, 0, 0, 100, 100));
  EXPECT_FALSE(scratch_fits(0, 0, 0, 101, 100));
  EXPECT_FALSE(scratch_fits(60, 0, 0, 50, 100));    // buffers + new scratch
  EXPECT_TRUE(scratch_fits(60, 40, 0, 40, 100));    // reuses the pool's free memory
  EXPECT_FALSE(scratch_fits(70, 40, 0, 10, 100));   // the reserved pool itself counts
  EXPECT_FALSE(scratch_fits(50, 40, 30, 21, 100));  // 11 more needed beyond the pool
  EXPECT_TRUE(scratch_fits(50, 40, 30, 20, 100));   // exactly fills the capacity
}

TEST(CudaDeviceInfo, PcieGenerationFromSysfsSpeed) {
  EXPECT_EQ(pcie_gen_of_speed("2.5 GT/s PCIe"), 1);
  EXPECT_EQ(pcie_gen_of_speed("16.0 GT/s PCIe"), 4);
  EXPECT_EQ(pcie_gen_of_speed("32.0 GT/s PCIe"), 5);
  EXPECT_EQ(pcie_gen_of_speed("64.0 GT/s PCIe"), 6);
  EXPECT_EQ(pcie_gen_of_speed("Unknown"), -1);
  EXPECT_EQ(pcie_gen_of_speed(""), -1);
}

TEST(CudaDeviceInfo, ListingDevicesNeverThrows) {
  const auto devs = list_devices();  // empty on machines without a GPU
  if (test::gpu_missing_reason().empty()) {
    ASSERT_FALSE(devs.empty());
    EXPECT_GT(devs[0].sm_count, 0);
  }
}

}  // namespace
}  // namespace hb::cuda
#else
TEST(CudaPlan, SkippedWithoutCuda) { GTEST_SKIP() << "built without CUDA (HYBRIDBENCH_CUDA=OFF)"; }
#endif
