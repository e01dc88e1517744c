// Issue 15 part 5: each ablation keeps everything but its one mechanism identical. Every
// registered hybrid variant, run through the runner on the same problem and platform, reports
// the same accelerator window, hot slots, shipped-row buffers and budget; `hybridgen-naive`
// interleaves host pages over the host tiers instead of using the fastest.
#include <gtest/gtest.h>

#include "hybrid/register.h"
#include "bench/runner.h"
#include "rig.h"

namespace hb::test {
namespace {

const char* const kVariants[] = {"hybridgen", "hybridgen-lse", "hybridgen-static",
                                 "hybridgen-naive", "hybridgen-serial"};

bench::SweepSpec ablation_spec() {
  register_hybrid(StrategyRegistry::instance());
  bench::SweepSpec s;
  s.models = {"qwen2.5-0.5b"};
  s.seq_lens = {6000};  // 3 MiB of KV (2 KV heads, d 64, fp16)
  s.decode_steps = 6;
  for (const char* v : kVariants) s.strategies.push_back(v);
  s.stop.warmup_steps = 1;
  s.stop.min_samples = 1000;
  s.stop.timeout_s = 60;
  s.accuracy_steps = 2;
  s.accelerator.kind = AcceleratorKind::cpu;
  s.accelerator.cpu_threads = 1;
  s.accelerator.capacity_bytes = 2 << 20;  // about half of the KV does not fit
  s.host_threads = 1;
  return s;
}

TEST(Ablations, ShareHybridGensWindowBuffersAndBudget) {
  auto report = bench::run_sweep(ablation_spec(), bench::RunEnvironment{});
  ASSERT_EQ(report.points.size(), std::size(kVariants));
  const reports::Point* base = nullptr;
  for (const auto& p : report.points)
    if (p.axes.strategy == "hybridgen") base = &p;
  ASSERT_NE(base, nullptr);
  ASSERT_EQ(base->status, reports::PointStatus::ok) << base->reason;
  EXPECT_EQ(base->strategy_params.at("all_kv_on_accelerator"), "no");
  EXPECT_GT(std::stoll(base->strategy_params.at("accelerator_window_tokens")), 0);
  EXPECT_GT(std::stoll(base->strategy_params.at("hot_pages_per_head")), 0);
  for (const auto& p : report.points) {
    SCOPED_TRACE(p.axes.strategy);
    ASSERT_EQ(p.status, reports::PointStatus::ok) << p.reason;
    for (const char* key :
         {"accelerator_window_tokens", "accelerator_budget_bytes", "accelerator_pages_per_head",
          "hot_pages_per_head", "shipped_rows_per_head", "shipped_row_bytes"})
      EXPECT_EQ(p.strategy_params.at(key), base->strategy_params.at(key)) << key;
  }
}

TEST(Ablations, OwnBudgetSizesEachVariantForItself) {
  auto spec = ablation_spec();
  spec.strategies = {"hybridgen", "hybridgen-lse"};
  spec.strategy_options = {{"hybridgen-lse.budget", "own"}};
  auto report = bench::run_sweep(spec, bench::RunEnvironment{});
  ASSERT_EQ(report.points.size(), 2u);
  const auto& a =
      report.points[0].axes.strategy == "hybridgen" ? report.points[0] : report.points[1];
  const auto& b = &a == &report.points[0] ? report.points[1] : report.points[0];
  // No shipped rows to hold: the exact mode's own window is larger.
  EXPECT_GT(std::stoll(b.strategy_params.at("accelerator_window_tokens")),
            std::stoll(a.strategy_params.at("accelerator_window_tokens")));
  EXPECT_EQ(b.strategy_params.at("shipped_rows_per_head"), "0");
}

TEST(Ablations, NaiveInterleavesOverTheHostTiers) {
  const AttentionShape shape{8, 2, 64, DType::f16};
  Rig rig(shape, 1000, 2, 1 << 20,
          {tier(MemoryKind::local_dram, 0), tier(MemoryKind::cxl, 1, true)});
  register_hybrid(StrategyRegistry::instance());
  StrategyOptions opts(std::map<std::string, std::string>{{"hybridgen-naive.gpu_tokens", "128"}});
  auto hg = StrategyRegistry::instance().find("hybridgen-naive").make(opts);
  const PlanResult plan = hg->plan(rig.problem, rig.platform);
  ASSERT_EQ(plan.status, PlanStatus::ok);
  EXPECT_EQ(plan.parameters.at("kv_mapping"), "interleave");
  hg->load();
  const auto counts = dynamic_cast<hybrid::HybridGen&>(*hg).block_placement();
  EXPECT_GT(counts.at("K@cxl@1(emulated)"), 0);  // not everything on the fastest tier
  EXPECT_GT(counts.at("K@local-dram@0"), 0);
}

}  // namespace
}  // namespace hb::test
