// The accelerator's KV budget when --accelerator-memory does not give it (bench/kv_budget.h),
// each point's kv_fit_fraction, and a measured point's provenance when a tier is emulated.
#include <gtest/gtest.h>

#include <set>

#include "bench/contender.h"
#include "bench/kv_budget.h"
#include "bench/runner.h"
#include "tests/bench/tiny_spec.h"

namespace hb::bench {
namespace {

TEST(KvBudget, DeploymentSubtractsEveryLayersWeightsAndTheActivations) {
  const ModelPreset& p = find_model_preset("llama-3.1-8b");
  // (80e9 - 13,958,643,712 weights - 122,880 activations at batch 1) / 32 layers.
  EXPECT_EQ(deployment_kv_budget(p, 80'000'000'000, 1), int64_t{2063788544});
  // Activations grow with the batch: 64 sequences take 63 x 122,880 more.
  EXPECT_EQ(deployment_kv_budget(p, 80'000'000'000, 64),
            (80'000'000'000 - 13958643712 - 64 * int64_t{122880}) / 32);
  // Weights larger than the memory leave the floor: every all-on-GPU point is then oom.
  EXPECT_EQ(deployment_kv_budget(p, int64_t{8} << 30, 1), kMinKvBudgetBytes);
}

TEST(KvBudget, EmulatedDefaultPutsTheDefaultSweepOnBothSidesOfTheBoundary) {
  const SweepSpec spec;  // llama-3.1-8b, 4k/16k/32k, batch 1, fp16, 24 steps, 16-token pages
  const ModelPreset& p = find_model_preset(spec.models[0]);
  // Twice the shortest point's KV: 2 x (4096 + 24 -> 4128 tokens) x 4 KiB per token.
  const int64_t budget = crossing_kv_budget(spec, p);
  EXPECT_EQ(budget, int64_t{33816576});
  int fits = 0, short_of = 0;
  for (int64_t len : spec.seq_lens) {
    const double f = kv_fit_fraction(budget, p.shape, len, 1, spec.decode_steps);
    EXPECT_GE(f, 0.0);
    EXPECT_LE(f, 1.0);
    (f >= 1 ? fits : short_of) += 1;
  }
  EXPECT_GE(fits, 1);
  EXPECT_GE(short_of, 2);
  EXPECT_NEAR(kv_fit_fraction(budget, p.shape, 16384, 1, 24), 0.503, 0.001);
  EXPECT_NEAR(kv_fit_fraction(budget, p.shape, 32768, 1, 24), 0.252, 0.001);
  // The smallest batch and the widest KV type decide: fp32 doubles it, batch 4 quadruples it.
  SweepSpec wide = spec;
  wide.kv_dtypes = {DType::f16, DType::f32};
  wide.batches = {4, 8};
  EXPECT_EQ(crossing_kv_budget(wide, p), 8 * budget);
  // The largest sweep the options allow does not overflow: the budget stops at an exabyte.
  wide.seq_lens = {int64_t{1} << 40};
  wide.batches = {4096};
  EXPECT_EQ(crossing_kv_budget(wide, p), int64_t{1000000000000000000});
}

TEST(KvBudget, GivenMemoryWinsAndTheOldDefaultStaysForLibraryCallers) {
  SweepSpec spec;
  AcceleratorInfo cpu;
  cpu.emulated = true;
  cpu.capacity_bytes = int64_t{2} << 30;
  EXPECT_TRUE(kv_budgets(spec, cpu).empty());  // deployment_kv_budget off: the accelerator's own
  spec.deployment_kv_budget = true;
  EXPECT_EQ(kv_budgets(spec, cpu).at("llama-3.1-8b").bytes, int64_t{33816576});
  AcceleratorInfo gpu;
  gpu.capacity_bytes = 80'000'000'000;
  EXPECT_EQ(kv_budgets(spec, gpu).at("llama-3.1-8b").bytes, int64_t{2063788544});
  EXPECT_NE(kv_budgets(spec, gpu).at("llama-3.1-8b").rule.find("weights"), std::string::npos);
  spec.accelerator.capacity_bytes = 64 << 20;
  EXPECT_EQ(kv_budgets(spec, gpu).at("llama-3.1-8b").bytes, 64 << 20);
  EXPECT_EQ(kv_budgets(spec, gpu).at("llama-3.1-8b").rule, "--accelerator-memory");
}

TEST(KvBudget, FitFractionIsCappedAndCountsTheWholeBatch) {
  const AttentionShape s = find_model_preset("qwen2.5-0.5b").shape;  // 512 bytes per token
  EXPECT_EQ(kv_fit_fraction(int64_t{1} << 30, s, 1000, 1, 0), 1.0);
  EXPECT_DOUBLE_EQ(kv_fit_fraction(512 * 500, s, 1000, 1, 0), 0.5);
  EXPECT_DOUBLE_EQ(kv_fit_fraction(512 * 500, s, 1000, 2, 0), 0.25);
  EXPECT_DOUBLE_EQ(kv_fit_fraction(512 * 500, s, 990, 1, 10), 0.5);  // the decode steps' tokens
  EXPECT_EQ(kv_fit_fraction(0, s, 1000, 1, 0), 0.0);
}

// A default-like sweep (the runner with the deployment budget, the cpu accelerator, no
// --accelerator-memory) at small sizes: points on both sides of the fit boundary, and the
// all-on-accelerator strategy oom exactly where its KV does not fit.
TEST(KvBudget, DefaultLikeSweepHasPointsOnBothSidesOfTheBoundary) {
  SweepSpec spec = testing::tiny_spec({1024, 4096, 8192});
  spec.decode_steps = 4;
  spec.accuracy_steps = 1;
  spec.stop.min_samples = 2;
  spec.deployment_kv_budget = true;
  const reports::Report r = run_sweep(spec, RunEnvironment{});
  ASSERT_EQ(r.points.size(), 6u);
  std::set<int64_t> fit, short_of;
  for (const auto& p : r.points) {
    ASSERT_TRUE(p.kv_fit_fraction.has_value()) << p.axes.key();
    (*p.kv_fit_fraction >= 1 ? fit : short_of).insert(p.axes.seq_len);
    if (p.axes.strategy == "full-gpu")
      EXPECT_EQ(p.status,
                *p.kv_fit_fraction >= 1 ? reports::PointStatus::ok : reports::PointStatus::oom)
          << p.axes.key() << ": " << p.reason;
    else
      EXPECT_EQ(p.status, reports::PointStatus::ok) << p.reason;
  }
  EXPECT_EQ(fit, (std::set<int64_t>{1024}));
  EXPECT_EQ(short_of, (std::set<int64_t>{4096, 8192}));
  EXPECT_NE(r.context.sweep.at("accelerator_kv_budget_bytes.qwen2.5-0.5b").find("emulated"),
            std::string::npos);
  // Without the deployment budget (library callers, tests) the cpu accelerator keeps 2 GiB.
  spec.deployment_kv_budget = false;
  for (const auto& p : run_sweep(spec, RunEnvironment{}).points) {
    EXPECT_EQ(p.kv_fit_fraction, 1.0);
    EXPECT_EQ(p.status, reports::PointStatus::ok) << p.reason;
  }
}

TEST(Provenance, EmulatedWhenTheAcceleratorOrAnyTierIs) {
  AcceleratorInfo gpu;  // a real accelerator
  const MemoryLocation hbm{MemoryKind::accelerator, 0, false};
  const MemoryLocation dram{MemoryKind::local_dram, 0, false};
  const MemoryLocation cxl{MemoryKind::cxl, 1, true};  // a remote node standing in for CXL
  EXPECT_EQ(provenance_of(gpu, {}), reports::Provenance::measured);
  EXPECT_EQ(provenance_of(gpu, {{nullptr, 1, hbm, "K+V"}, {nullptr, 1, dram, "K"}}),
            reports::Provenance::measured);
  EXPECT_EQ(provenance_of(gpu, {{nullptr, 1, hbm, "K+V"}, {nullptr, 1, cxl, "V"}}),
            reports::Provenance::emulated);
  AcceleratorInfo cpu;
  cpu.emulated = true;
  EXPECT_EQ(provenance_of(cpu, {{nullptr, 1, dram, "K"}}), reports::Provenance::emulated);
}

TEST(Provenance, AnEmulatedTiersFlagReachesThePointsRegions) {
  // The runner's tiers: one emulated CXL tier. cpu-only keeps its KV there; the region it
  // reports carries the flag provenance_of reads.
  SweepSpec spec = testing::tiny_spec({256});
  spec.strategies = {"cpu-only"};
  RunEnvironment env;
  const MemoryLocation cxl{MemoryKind::cxl, 0, true};
  env.host_tiers.push_back(HostTier{cxl, host_allocator(cxl)});
  const reports::Report r = run_sweep(spec, env);
  ASSERT_EQ(r.points.size(), 1u);
  const auto& p = r.points[0];
  ASSERT_EQ(p.status, reports::PointStatus::ok) << p.reason;
  ASSERT_FALSE(p.placement.empty());
  EXPECT_NE(p.placement[0].intended.find("emulated"), std::string::npos) << p.placement[0].intended;
  EXPECT_EQ(p.provenance, reports::Provenance::emulated);
}

// What --kv-node must hold (cli's check): the largest point's KV, its tokens rounded up to
// whole pages. qwen2.5-0.5b: 2 KV heads x 64; fp32 2 x 2 x 64 x 4 = 1 KiB per token.
TEST(KvBudget, LargestPointKvCountsPagesBatchAndTheWidestType) {
  SweepSpec spec;
  spec.models = {"qwen2.5-0.5b"};
  spec.seq_lens = {256, 1000};
  spec.batches = {3, 1};
  spec.kv_dtypes = {DType::f16, DType::f32};
  spec.decode_steps = 24;  // 1000 + 24 = 1024: whole pages of 16
  spec.page_tokens = 16;
  const LargestKv l = largest_point_kv(spec);
  EXPECT_EQ(l.bytes, int64_t{1024} * 3 * 1024);
  EXPECT_EQ(l.what, "qwen2.5-0.5b, 1000 tokens, batch 3, fp32");
  spec.decode_steps = 25;  // 1025 tokens: a 65th page, 1040 tokens
  EXPECT_EQ(largest_point_kv(spec).bytes, int64_t{1040} * 3 * 1024);
  spec.models.clear();
  EXPECT_EQ(largest_point_kv(spec).bytes, 0);
}

}  // namespace
}  // namespace hb::bench
