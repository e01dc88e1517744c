// Accuracy at the default ratio on the needle workload, against the pruning baselines that keep
// a comparable accelerator budget (StreamingLLM, H2O), through the runner.
#include <gtest/gtest.h>

#include "baselines/register.h"
#include "hybrid/register.h"
#include "bench/runner.h"

namespace hb::test {
namespace {

bool registered(const std::string& name) {
  for (const auto& i : StrategyRegistry::instance().all())
    if (i.name == name) return true;
  return false;
}

TEST(HybridGenAccuracy, NeedleAtDefaultRatioBeatsStreamingLlmAndH2o) {
  register_baselines(StrategyRegistry::instance());
  register_hybrid(StrategyRegistry::instance());
  bench::SweepSpec s;
  s.models = {"qwen2.5-0.5b"};
  s.seq_lens = {4096};
  s.workload = "diffuse:needle=1";  // the original needle, mid-prompt: host side for HybridGen
  s.decode_steps = 16;
  s.stop.warmup_steps = 2;
  s.stop.min_samples = 1000;
  s.accuracy_steps = -1;
  s.accelerator.kind = AcceleratorKind::cpu;
  s.accelerator.cpu_threads = 1;
  // 1 MiB: about a third of the 2 MiB of KV fits (HybridGen's window ~ the baselines' 20%
  // budgets plus the room its shipped rows need).
  s.accelerator.capacity_bytes = 1 << 20;
  s.host_threads = 1;
  s.strategies = {"hybridgen"};
  // The default ratio held fixed (the feedback scheduler would lower it on a slow CPU side,
  // making the figure depend on machine load).
  s.strategy_options = {{"hybridgen.scheduler", "static"}};
  std::vector<std::string> baselines;
  for (const char* b : {"streamingllm", "h2o"})
    if (registered(b)) baselines.push_back(b);
  for (const auto& b : baselines) s.strategies.push_back(b);

  const auto report = bench::run_sweep(s, bench::RunEnvironment{});
  std::map<std::string, const reports::Point*> by;
  for (const auto& p : report.points) by[p.axes.strategy] = &p;
  const auto& hg = *by.at("hybridgen");
  ASSERT_EQ(hg.status, reports::PointStatus::ok) << hg.reason;
  EXPECT_EQ(hg.strategy_params.at("all_kv_on_accelerator"), "no");
  EXPECT_EQ(hg.strategy_params.at("ratio"), "0.050000");
  // Thresholds that hold whether or not the baselines are built in.
  EXPECT_GE(hg.accuracy.needle_success_rate, 0.95);
  EXPECT_GE(hg.accuracy.mass_recall, 0.9);
  EXPECT_GT(hg.accuracy.cosine, 0.95);
  for (const auto& b : baselines) {
    SCOPED_TRACE(b);
    const auto& p = *by.at(b);
    if (p.status != reports::PointStatus::ok) continue;
    EXPECT_GE(hg.accuracy.needle_success_rate, p.accuracy.needle_success_rate);
    EXPECT_GT(hg.accuracy.mass_recall, p.accuracy.mass_recall);
    EXPECT_LT(hg.accuracy.rel_l2, p.accuracy.rel_l2);
  }
  if (baselines.size() < 2)
    GTEST_LOG_(INFO) << "streamingllm/h2o not registered: only thresholds checked";
}

}  // namespace
}  // namespace hb::test
