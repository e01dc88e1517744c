// The CUDA accelerator's plumbing: discovery, the capacity budget, staging memory, queued
// copies, busy time. The no-GPU behaviour of the factory is checked on every machine.
#include "tests/kernels/cuda_test_util.h"

#include "core/error.h"

namespace hb {
namespace {

TEST(CudaBackend, AskingForCudaWithoutAGpuSaysWhy) {
  std::string why;
  if (cuda_available(&why)) GTEST_SKIP() << "a GPU is present";
  EXPECT_FALSE(why.empty());
  EXPECT_TRUE(cuda_device_numa_nodes().empty());  // no GPU to place ranks by
  AcceleratorOptions o;
  o.kind = AcceleratorKind::cuda;
  try {
    make_accelerator(o);
    FAIL() << "expected hb::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no GPU is usable"), std::string::npos) << e.what();
  }
  o.kind = AcceleratorKind::auto_select;
  EXPECT_EQ(make_accelerator(o)->info().kind,
            AcceleratorKind::cpu);  // auto falls back, labelled emulated
}

TEST(CudaBackend, LinkProbeWithoutAGpuIsEmptyAndSaysWhy) {
  std::string why;
  if (cuda_available(&why)) GTEST_SKIP() << "a GPU is present";
  std::string link_why;
  EXPECT_TRUE(measure_accelerator_links(0, 1 << 20, 2, &link_why).empty());
  EXPECT_EQ(link_why, why);
}

#ifdef HB_WITH_CUDA

// The link probe `probe` runs: three figures per repetition, plausible for any GPU on any link.
TEST(CudaAccelerator, LinkProbeMeasuresH2dD2hAndDeviceCopy) {
  HB_REQUIRE_GPU_OR_SKIP();
  const auto links = measure_accelerator_links(0, size_t{32} << 20, 3);
  ASSERT_EQ(links.size(), 3u);
  EXPECT_EQ(links[0].link, CopyLink::h2d);
  EXPECT_EQ(links[1].link, CopyLink::d2h);
  EXPECT_EQ(links[2].link, CopyLink::hbm_copy);
  for (const auto& l : links) {
    ASSERT_EQ(l.gbps.size(), 3u) << kCopyLinks.name(l.link);
    for (double g : l.gbps) {
      EXPECT_GT(g, 0.5) << kCopyLinks.name(
          l.link);  // slower than any PCIe 1.0 x16 link: the timing is wrong
      EXPECT_LT(g, 20000.0) << kCopyLinks.name(l.link);  // faster than any HBM: the timing is wrong
    }
  }
}

TEST(CudaAccelerator, DescribesTheDevice) {
  HB_REQUIRE_GPU_OR_SKIP();
  auto& acc = test::gpu();
  EXPECT_EQ(acc.info().kind, AcceleratorKind::cuda);
  EXPECT_FALSE(acc.info().emulated);
  EXPECT_FALSE(acc.info().name.empty());
  EXPECT_GT(acc.info().capacity_bytes, 0);
  EXPECT_NE(acc.info().details.find("SMs"), std::string::npos);
  const auto& d = acc.device();
  EXPECT_GT(d.sm_count, 0);
  EXPECT_GE(d.cc_major, 9);
  EXPECT_GT(d.hbm_bytes, d.free_bytes / 2);
  EXPECT_FALSE(d.bus_id.empty());
  EXPECT_EQ(acc.info().numa_node, d.numa_node);
  AcceleratorOptions o;
  o.kind = AcceleratorKind::auto_select;
  EXPECT_EQ(make_accelerator(o)->info().kind, AcceleratorKind::cuda);
}

TEST(CudaAccelerator, CapacityBudgetIsEnforcedAndAccounted) {
  HB_REQUIRE_GPU_OR_SKIP();
  auto acc = cuda::make_cuda_device(0, 8 << 20);
  EXPECT_EQ(acc->info().capacity_bytes, 8 << 20);
  {
    Buffer a = acc->memory()->allocate(6 << 20);
    EXPECT_EQ(acc->bytes_in_use(), 6 << 20);
    EXPECT_EQ(a.location().kind, MemoryKind::accelerator);
    EXPECT_FALSE(acc->memory()->host_accessible());
    try {
      acc->memory()->allocate(4 << 20);
      FAIL() << "expected a capacity error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("capacity"), std::string::npos) << e.what();
      EXPECT_EQ(e.exit_code(), kExitFailure);
    }
  }
  EXPECT_EQ(acc->bytes_in_use(), 0);
}

TEST(CudaAccelerator, StagingRoundTripThroughTheQueue) {
  HB_REQUIRE_GPU_OR_SKIP();
  auto& acc = test::gpu();
  const size_t n = (3 << 20) + 5;
  auto staging = acc.staging_memory(acc.info().numa_node);
  Buffer src = staging->allocate(n), back = staging->allocate(n);
  EXPECT_TRUE(staging->host_accessible());
  for (size_t i = 0; i < n; ++i) src.as<unsigned char>()[i] = static_cast<unsigned char>(i * 7 + 3);
  Buffer dev = acc.memory()->allocate(n);
  acc.synchronize();
  acc.copy_to_device(dev.data(), src.data(), n);
  acc.copy_to_host(back.data(), dev.data(), n);
  EXPECT_GT(acc.synchronize(), 0);  // busy time of the two copies
  EXPECT_EQ(std::memcmp(src.data(), back.data(), n), 0);
  EXPECT_EQ(acc.synchronize(), 0);  // nothing queued since
}

// Issue 16: busy time starts when an op's first GPU work is queued, not when the op is entered:
// ops that queue nothing (empty, or refused by host-side validation) add no busy time at all.
TEST(CudaAccelerator, HostOnlyWorkIsNotBusyTime) {
  HB_REQUIRE_GPU_OR_SKIP();
  auto& acc = test::gpu();
  acc.synchronize();
  Buffer dev = acc.memory()->allocate(64);
  acc.copy_to_device(dev.data(), nullptr, 0);
  acc.copy_to_host(nullptr, dev.data(), 0);
  acc.decode_attention(nullptr, 0);
  DecodeAttentionArgs bad;
  bad.q_heads = 3;  // no KV heads: refused before any GPU work
  EXPECT_THROW(acc.decode_attention(&bad, 1), Error);
  EXPECT_EQ(acc.synchronize(), 0);
}

TEST(CudaAccelerator, CustomWorkCountsAsBusyTime) {
  HB_REQUIRE_GPU_OR_SKIP();
  auto& acc = test::gpu();
  acc.synchronize();
  bool ran = false;
  acc.run_on_queue("test.custom", [&](void* stream) { ran = stream != nullptr; });
  acc.synchronize();
  EXPECT_TRUE(ran);
}

// Issue 16: GPUs' host nodes are listed in CUDA's device order (--device's index), not by PCI
// bus id: entry i is device i's own node.
TEST(CudaAccelerator, DeviceNodesFollowCudaDeviceOrder) {
  HB_REQUIRE_GPU_OR_SKIP();
  const auto nodes = cuda_device_numa_nodes();
  const auto devs = cuda::list_devices();
  ASSERT_EQ(nodes.size(), devs.size());
  for (size_t i = 0; i < devs.size(); ++i) {
    EXPECT_EQ(devs[i].index, static_cast<int>(i));
    EXPECT_EQ(nodes[i], devs[i].numa_node) << "device " << i << " at " << devs[i].bus_id;
  }
}

#endif  // HB_WITH_CUDA

}  // namespace
}  // namespace hb
