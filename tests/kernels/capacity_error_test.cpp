// Memory that runs out is an hb::CapacityError on every accelerator, so the runner can report
// the point as "oom" by type (bench): the cpu accelerator's budget on every machine, the
// CUDA budget and cudaMalloc itself failing on a GPU.
#include "tests/kernels/cuda_test_util.h"

#include "core/error.h"

namespace hb {
namespace {

// The budget's error when `bytes` more are asked of an accelerator of kind `kind`.
void expect_capacity_error(AcceleratorKind kind, int64_t capacity, size_t first, size_t second) {
  AcceleratorOptions o;
  o.kind = kind;
  o.capacity_bytes = capacity;
  o.cpu_threads = 1;
  auto acc = make_accelerator(o);
  Buffer held = acc->memory()->allocate(first);
  try {
    acc->memory()->allocate(second);
    FAIL() << kAcceleratorKinds.name(kind) << ": expected hb::CapacityError";
  } catch (const CapacityError& e) {
    EXPECT_EQ(e.exit_code(), kExitFailure);
    EXPECT_FALSE(e.fix().empty());
  }
}

TEST(CapacityError, CpuAcceleratorBudgetThrowsIt) {
  expect_capacity_error(AcceleratorKind::cpu, 1 << 20, 768 << 10, 512 << 10);
}

TEST(CapacityError, CudaBudgetThrowsIt) {
  HB_REQUIRE_GPU_OR_SKIP();
  expect_capacity_error(AcceleratorKind::cuda, 8 << 20, 6 << 20, 4 << 20);
}

TEST(CapacityError, CudaMallocRunningOutThrowsIt) {
  HB_REQUIRE_GPU_OR_SKIP();
  // A budget far beyond the device: the budget lets it through and cudaMalloc fails
  // (cudaErrorMemoryAllocation, kernels/cuda/cuda_check.cpp).
  expect_capacity_error(AcceleratorKind::cuda, int64_t{1} << 50, 1, size_t{1} << 48);
}

}  // namespace
}  // namespace hb
