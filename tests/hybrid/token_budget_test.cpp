// run --kv-budget on HybridGen (hybrid/budget.cpp, choose_rows in hybrid/logit_parallelism.cpp):
// the resident side (window + promoted hot pages) plus the CPU's top-k attend exactly the budget at
// every step, also while the newest window page is partly filled and hot slots are still empty
// (they used to be subtracted from the budget: 1966 of 2048 tokens at 32k).
#include <gtest/gtest.h>

#include "baselines/register.h"
#include "hybrid/register.h"
#include "bench/runner.h"

namespace hb::test {
namespace {

TEST(HybridGenTokenBudget, AttendsExactlyTheBudgetWithHotSlotsAndAPartialPage) {
  register_baselines(StrategyRegistry::instance());
  register_hybrid(StrategyRegistry::instance());
  bench::SweepSpec s;
  s.models = {"qwen2.5-0.5b"};  // 14 q heads, 2 KV heads, d = 64
  s.seq_lens = {4096};
  s.workload = "llama-like";
  // 1024 tokens: 32 accelerator pages, 3 of them hot slots (hot_share 0.1) that fill only as
  // pages get promoted; 20 steps cross a page boundary (4097..4116), so the newest page holds
  // 1 to 16 tokens.
  s.kv_budgets = bench::parse_kv_budgets("1024");
  s.decode_steps = 20;
  s.stop.warmup_steps = 1;
  s.stop.min_samples = 1000;
  s.accuracy_steps = -1;  // every step scored, so every step's attended set is reported
  s.accelerator.kind = AcceleratorKind::cpu;
  s.accelerator.cpu_threads = 1;
  s.host_threads = 1;
  s.strategies = {"hybridgen"};
  const reports::Report r = bench::run_sweep(s, bench::RunEnvironment{});
  ASSERT_EQ(r.points.size(), 1u);
  const reports::Point& p = r.points[0];
  ASSERT_EQ(p.status, reports::PointStatus::ok) << p.reason;
  EXPECT_EQ(p.strategy_params.at("hot_pages_per_head"), "3");
  ASSERT_TRUE(p.attended_tokens.has_value());
  EXPECT_EQ(p.attended_tokens->min, 1024);
  EXPECT_EQ(p.attended_tokens->max, 1024);
  EXPECT_GT(p.accuracy.mass_recall, 0.8);
  EXPECT_LT(p.accuracy.mass_recall, 1.0);  // a real selection, not everything
}

}  // namespace
}  // namespace hb::test
