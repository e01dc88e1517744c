// StepIO's host rows live in the accelerator's staging memory (pinned on CUDA), so the output
// copy is asynchronous and kernels may read them; on the cpu accelerator they are plain host
// memory at the staging location. Issue 16.
#include "core/step_io.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/workload.h"
#include "tests/kernels/cuda_test_util.h"

namespace hb {
namespace {

struct StepIoCase {
  AttentionShape shape{8, 2, 64, DType::f16};
  std::vector<Workload> ws;
  Problem problem;
  explicit StepIoCase(int batch) {
    for (int b = 0; b < batch; ++b) ws.push_back(make_workload(shape, 20, 2, WorkloadSpec{}));
    problem.shape = shape;
    problem.batch = batch;
    problem.workloads = ws;
  }
};

// What stage() sends down comes back up through the host rows, for every sequence.
void expect_round_trip(Accelerator& acc, const StepIoCase& c, StepIO& io) {
  io.stage(1);
  acc.copy_to_host(io.q_host.data(), io.q_dev(), io.q_bytes());
  acc.copy_to_host(io.k_host.data(), io.k_dev(), io.kv_row_bytes());
  acc.synchronize();
  const size_t qn = static_cast<size_t>(c.shape.q_heads) * c.shape.head_dim;
  const size_t kn = static_cast<size_t>(c.shape.kv_heads) * c.shape.head_dim;
  for (size_t b = 0; b < c.ws.size(); ++b) {
    for (size_t i = 0; i < qn; ++i) ASSERT_EQ(io.q_host[b * qn + i], c.ws[b].step(1).q[i]);
    for (size_t i = 0; i < kn; ++i) ASSERT_EQ(io.k_host[b * kn + i], c.ws[b].step(1).k[i]);
  }
}

TEST(StepIO, HostRowsAreStagingMemoryOnTheCpuAccelerator) {
  AcceleratorOptions o;
  o.kind = AcceleratorKind::cpu;
  o.cpu_threads = 1;
  auto acc = make_accelerator(o);
  StepIoCase c(3);
  StepIO io(c.problem, *acc);
  EXPECT_EQ(io.o_host.size(), 3u * 8 * 64);
  EXPECT_EQ(io.lse_host.size(), 3u * 8);
  EXPECT_EQ(io.o_host.location().kind, acc->staging_memory(acc->info().numa_node)->location().kind);
  expect_round_trip(*acc, c, io);
  EXPECT_EQ(io.o_host.to_vector().size(), io.o_host.size());
}

#ifdef HB_WITH_CUDA
// On CUDA the rows are pinned and mapped: a kernel reads them by their host address (a merge of
// one part from the host rows), which pageable memory would fault on.
TEST(StepIO, HostRowsArePinnedOnCuda) {
  HB_REQUIRE_GPU_OR_SKIP();
  auto& acc = test::gpu();
  StepIoCase c(2);
  StepIO io(c.problem, acc);
  expect_round_trip(acc, c, io);
  for (size_t i = 0; i < io.o_host.size(); ++i) io.o_host[i] = static_cast<float>(i % 13);
  for (size_t i = 0; i < io.lse_host.size(); ++i) io.lse_host[i] = 0.5f;
  const float* o_parts[] = {io.o_host.data()};
  const float* lse_parts[] = {io.lse_host.data()};
  acc.merge_partials(1, o_parts, lse_parts, 2 * 8, 64, io.o_dev(), io.lse_dev());
  std::vector<float> o(io.o_host.size());
  acc.synchronize();
  acc.memory()->copy_out(o.data(), io.o_dev(), io.o_bytes());
  for (size_t i = 0; i < o.size(); ++i) ASSERT_EQ(o[i], static_cast<float>(i % 13));
}
#endif

}  // namespace
}  // namespace hb
