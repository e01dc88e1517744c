// bench/accuracy.cpp: the runner's fp64 reference oracle.
#include "bench/accuracy.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/thread_pool.h"
#include "core/workload.h"

namespace hb::bench {
namespace {

Problem small_problem(const std::vector<Workload>& ws) {
  Problem p;
  p.shape = ws[0].shape;
  p.workloads = ws;
  return p;
}

AttentionShape small_shape() {
  AttentionShape s;
  s.q_heads = 4;
  s.kv_heads = 2;
  s.head_dim = 16;
  return s;
}

// Kept steps (strategies one after another) carry their probabilities from the first
// computation, so a sparse strategy after a dense one does not recompute the step; the figures
// are those of a computation asked for them.
TEST(ReferenceOracle, KeptStepsCarryProbabilitiesFromTheFirstComputation) {
  const std::vector<Workload> ws = {
      make_workload(small_shape(), 300, 3, parse_workload_spec("llama-like"))};
  const Problem problem = small_problem(ws);
  ThreadPool pool(2);
  ReferenceOracle kept(problem, pool, /*keep_all=*/true), latest(problem, pool, false);
  const StepReference dense = kept.at(1, false);
  const StepReference& asked = latest.at(1, true);
  ASSERT_EQ(dense.probs.size(), asked.probs.size());
  ASSERT_EQ(dense.probs.size(), size_t{4} * 302);
  for (size_t i = 0; i < asked.probs.size(); ++i) ASSERT_EQ(dense.probs[i], asked.probs[i]) << i;
  EXPECT_EQ(dense.o, asked.o);
  EXPECT_EQ(dense.lse, asked.lse);
  EXPECT_EQ(&kept.at(1, true), &kept.at(1, false)) << "the kept step serves both requests";
  // The latest step alone (strategies side by side) computes probabilities only when asked.
  EXPECT_TRUE(latest.at(2, false).probs.empty());
}

}  // namespace
}  // namespace hb::bench
