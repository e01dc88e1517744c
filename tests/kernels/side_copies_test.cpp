// Side copies (core/accelerator.h): a copy on the copy engine beside the queue. On the cpu
// accelerator the overlap itself is observable (its memory is host memory): the copy lands
// while an earlier queued operation still runs, the queue waits for it only after
// order_side_copies(), and that wait is not busy time. On CUDA (where a GPU is) the data
// arrives, ordered before later queue work.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "core/accelerator.h"
#include "core/thread_pool.h"
#include "kernels/backend.h"
#include "tests/kernels/cuda_test_util.h"

namespace hb {
namespace {

std::unique_ptr<Accelerator> cpu_accelerator() {
  AcceleratorOptions o;
  o.kind = AcceleratorKind::cpu;
  o.cpu_threads = 1;
  return make_accelerator(o);
}

TEST(SideCopies, CpuCopyLandsWhileTheQueueIsBusyAndOrdersLaterWork) {
  auto acc = cpu_accelerator();
  const size_t n = 1 << 16;
  std::vector<int> src(n, 7);
  Buffer dst = acc->memory()->allocate(n * sizeof(int));
  std::memset(dst.data(), 0, n * sizeof(int));
  std::atomic<bool> release{false}, landed_while_busy{false};
  // A queued operation that holds the queue until the side copy has landed (or 5 s pass).
  acc->enqueue(HostKernelArgs{[&](ThreadPool&) {
    const auto t0 = std::chrono::steady_clock::now();
    while (!release.load() && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5))
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    landed_while_busy = release.load();
  }});
  acc->copy_to_device_async(dst.data(), src.data(), n * sizeof(int));
  const auto t0 = std::chrono::steady_clock::now();
  while (dst.as<int>()[n - 1] != 7 &&
         std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5))
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  release = true;
  acc->order_side_copies();
  int seen = -1;
  acc->enqueue(HostKernelArgs{[&](ThreadPool&) { seen = dst.as<int>()[n / 2]; }});
  acc->synchronize();
  EXPECT_TRUE(landed_while_busy.load()) << "the side copy waited for the queue";
  EXPECT_EQ(seen, 7);
}

TEST(SideCopies, CpuWaitOnTheCopyEngineIsNotBusyTime) {
  auto acc = cpu_accelerator();
  const size_t bytes = size_t{256} << 20;  // long enough to measure against an empty queue
  std::vector<char> src(bytes, 1);
  Buffer dst = acc->memory()->allocate(bytes);
  acc->synchronize();
  const auto t0 = std::chrono::steady_clock::now();
  acc->copy_to_device_async(dst.data(), src.data(), bytes);
  acc->order_side_copies();
  const int64_t busy = acc->synchronize();
  const double wall_ns =
      std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(dst.as<char>()[bytes - 1], 1);  // synchronize waited for it
  EXPECT_LT(static_cast<double>(busy), 0.5 * wall_ns) << "the queue counted the copy as busy";
}

TEST(SideCopies, SynchronizeWaitsForUnorderedSideCopies) {
  auto acc = cpu_accelerator();
  std::vector<int> src(1000, 3);
  Buffer dst = acc->memory()->allocate(src.size() * sizeof(int));
  acc->copy_to_device_async(dst.data(), src.data(), src.size() * sizeof(int));
  acc->synchronize();
  EXPECT_EQ(dst.as<int>()[999], 3);
}

#ifdef HB_WITH_CUDA
TEST(CudaSideCopies, DataArrivesOrderedBeforeLaterQueueWork) {
  HB_REQUIRE_GPU_OR_SKIP();
  auto& acc = test::gpu();
  const size_t n = size_t{8} << 20;
  Buffer staging = acc.staging_memory(acc.info().numa_node)->allocate(n * sizeof(float));
  for (size_t i = 0; i < n; ++i) staging.as<float>()[i] = static_cast<float>(i % 977);
  test::DevVec<float> dst(n);
  acc.copy_to_device_async(dst.get(), staging.data(), n * sizeof(float));
  acc.order_side_copies();
  std::vector<float> back(n);
  acc.copy_to_host(back.data(), dst.get(), n * sizeof(float));  // queued after the order
  acc.synchronize();
  for (size_t i = 0; i < n; i += 4099) ASSERT_EQ(back[i], static_cast<float>(i % 977)) << i;
}
#endif

}  // namespace
}  // namespace hb
