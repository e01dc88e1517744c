// Every baseline end to end through run_sweep with the cpu accelerator: the known characters
// of each strategy on fixed seeds, and edge cases (context below the budgets, batch > 1).
#include <gtest/gtest.h>

#include <cmath>

#include "baselines/register.h"
#include "bench/runner.h"

namespace hb::bench {
namespace {

SweepSpec small_spec(std::vector<int64_t> seq_lens, std::string workload) {
  register_baselines(StrategyRegistry::instance());
  SweepSpec s;
  s.scope =
      Scope::attention;  // attention's own figures; layer scope: tests/bench/layer_scope_test.cpp
  s.models = {"qwen2.5-0.5b"};  // 14 q heads, 2 KV heads, d = 64
  s.seq_lens = std::move(seq_lens);
  s.strategies = {"all"};
  s.workload = std::move(workload);
  s.decode_steps = 5;
  s.stop.warmup_steps = 1;
  s.stop.min_samples = 2;
  s.accuracy_steps = 3;
  s.accelerator.kind = AcceleratorKind::cpu;
  s.accelerator.cpu_threads = 1;
  s.host_threads = 1;
  return s;
}

const reports::Point& point(const reports::Report& r, const std::string& strategy, int64_t seq,
                            int batch = 1) {
  for (const auto& p : r.points)
    if (p.axes.strategy == strategy && p.axes.seq_len == seq && p.axes.batch == batch) return p;
  throw std::runtime_error("no point for " + strategy);
}

TEST(Sweep, KnownCharactersOnTheNeedle) {
  // Needle in the middle of 4096 tokens: far outside StreamingLLM's 819-token budget.
  // diffuse:needle=1: the original needle workload these figures were pinned on.
  const auto report = run_sweep(small_spec({4096}, "diffuse:needle=1"), RunEnvironment{});
  for (const auto& p : report.points) {
    SCOPED_TRACE(p.axes.strategy);
    ASSERT_EQ(p.status, reports::PointStatus::ok) << p.reason;
    EXPECT_EQ(p.provenance, reports::Provenance::emulated);
    EXPECT_EQ(p.accuracy.steps_scored, 3);
    ASSERT_TRUE(p.accuracy.has_needle());
    // Recall per scored step (issue 33, item 9): one per step, in order, averaging to the
    // point's recall.
    ASSERT_EQ(p.accuracy.recall_per_step.size(), 3u);
    double sum = 0;
    for (size_t i = 0; i < 3; ++i) {
      if (i > 0)
        EXPECT_GT(p.accuracy.recall_per_step[i].step, p.accuracy.recall_per_step[i - 1].step);
      sum += p.accuracy.recall_per_step[i].recall;
    }
    EXPECT_NEAR(sum / 3, p.accuracy.mass_recall, 1e-12);
  }
  for (const std::string exact : {"full-gpu", "cpu-only", "offload"}) {
    SCOPED_TRACE(exact);
    const auto& p = point(report, exact, 4096);
    EXPECT_LT(p.accuracy.rel_l2, 1e-4);  // fp32 accumulation over exactly stored fp16 KV
    EXPECT_DOUBLE_EQ(p.accuracy.needle_success_rate, 1.0);
    EXPECT_DOUBLE_EQ(p.accuracy.mass_recall, 1.0);
  }
  // StreamingLLM evicted the needle for good.
  const auto& st = point(report, "streamingllm", 4096);
  EXPECT_LT(st.accuracy.needle_success_rate, 0.1);
  EXPECT_LT(st.accuracy.mass_recall, 0.5);
  // H2O kept it: every prompt query attended to it, so it is a heavy hitter.
  const auto& h2o = point(report, "h2o", 4096);
  EXPECT_GT(h2o.accuracy.needle_success_rate, 0.9);
  EXPECT_GT(h2o.accuracy.mass_recall, st.accuracy.mass_recall);
  // Query-aware selection recovers it. Quest's 2048-token budget keeps most of the mass;
  // InfiniGen fetches only the tokens within alpha = 4 logits of the best (the needle and a
  // handful more), so it keeps the needle's share and drops the long tail.
  for (const std::string sel : {"quest", "infinigen"}) {
    SCOPED_TRACE(sel);
    const auto& p = point(report, sel, 4096);
    EXPECT_GT(p.accuracy.needle_success_rate, 0.95);
    EXPECT_GT(p.accuracy.mass_recall, 3 * st.accuracy.mass_recall);
  }
  const auto& quest = point(report, "quest", 4096);
  EXPECT_GT(quest.accuracy.mass_recall, 0.9);
  EXPECT_LT(quest.accuracy.rel_l2, 0.1);
  EXPECT_GT(point(report, "infinigen", 4096).accuracy.mass_recall, 0.6);
  // The link traffic tells offloading from resident strategies.
  EXPECT_GT(point(report, "offload", 4096).traffic_per_step.h2d_bytes, 4096 * 512);
  EXPECT_EQ(point(report, "streamingllm", 4096).traffic_per_step.h2d_bytes, 0);
  const auto& ig = point(report, "infinigen", 4096);
  EXPECT_GT(ig.traffic_per_step.h2d_bytes, 0);
  EXPECT_LT(ig.traffic_per_step.h2d_bytes, 0.2 * 4096 * 512 + 1024);
}

TEST(Sweep, StreamingLlmLosesTheNeedleOutsideItsWindowAnExactStrategyKeepsIt) {
  // The `needle` family (llama-like plus an 8-token span at 1/4 of the prompt drawing half the
  // decode queries' attention) at 4096 tokens and --kv-budget 512: StreamingLLM keeps 4 sinks
  // and the last 508 tokens, so the span (tokens 1024..1031) is evicted for good and the output
  // no longer carries its value; full attention retrieves it at every scored step and head.
  auto spec = small_spec({4096}, "needle");
  spec.strategies = {"streamingllm", "full-gpu"};
  spec.kv_budgets = bench::parse_kv_budgets("512");
  const auto report = run_sweep(spec, RunEnvironment{});
  const auto& st = point(report, "streamingllm", 4096);
  const auto& exact = point(report, "full-gpu", 4096);
  for (const auto* p : {&st, &exact}) {
    ASSERT_EQ(p->status, reports::PointStatus::ok) << p->reason;
    ASSERT_TRUE(p->accuracy.has_needle());
    EXPECT_EQ(p->accuracy.steps_scored, 3);
  }
  ASSERT_TRUE(st.attended_tokens.has_value());
  EXPECT_EQ(st.attended_tokens->max, 512);  // the span is outside what it attends
  EXPECT_DOUBLE_EQ(exact.accuracy.needle_success_rate, 1.0);
  EXPECT_DOUBLE_EQ(st.accuracy.needle_success_rate, 0.0);
  EXPECT_LT(st.accuracy.mass_recall, 0.6);  // the span alone held half of the mass
}

TEST(Sweep, H2oKeepsMoreAttentionMassThanARecencyWindow) {
  // Structured workload: heavy hitters scattered over the context draw attention from every
  // query; at the same 20% budget H2O keeps more of the mass than sinks + window.
  auto spec = small_spec({2048}, "structured");
  spec.strategies = {"h2o", "streamingllm"};
  const auto report = run_sweep(spec, RunEnvironment{});
  const auto& h = point(report, "h2o", 2048);
  const auto& s = point(report, "streamingllm", 2048);
  ASSERT_EQ(h.status, reports::PointStatus::ok);
  ASSERT_EQ(s.status, reports::PointStatus::ok);
  EXPECT_GT(h.accuracy.mass_recall, s.accuracy.mass_recall + 0.02);
  EXPECT_LT(h.accuracy.rel_l2, s.accuracy.rel_l2);
}

TEST(Sweep, EdgeCasesShortContextsAndBatches) {
  // 100 tokens: below Quest's 2048-token budget (it attends everything), tiny pruning budgets;
  // batch 2: every strategy serves two sequences with different seeds.
  auto spec = small_spec({100}, "diffuse:needle=1");  // the original needle workload
  spec.batches = {1, 2};
  const auto report = run_sweep(spec, RunEnvironment{});
  ASSERT_EQ(report.points.size(), 2u * StrategyRegistry::instance().all().size());
  for (const auto& p : report.points) {
    SCOPED_TRACE(p.axes.strategy + " b" + std::to_string(p.axes.batch));
    ASSERT_EQ(p.status, reports::PointStatus::ok) << p.reason;
    EXPECT_TRUE(std::isfinite(p.accuracy.rel_l2));
    EXPECT_GE(p.step.summary.count, 2);
    if (p.axes.strategy == "quest" || p.axes.strategy == "offload" ||
        p.axes.strategy == "cpu-only" || p.axes.strategy == "full-gpu") {
      EXPECT_LT(p.accuracy.rel_l2, 1e-4);
    }
  }
  // Budgets at least the context: the pruning and selection strategies become exact.
  spec.strategy_options = {{"h2o.heavy", "1000"},           {"h2o.recent", "1000"},
                           {"streamingllm.window", "4096"}, {"infinigen.alpha", "1000"},
                           {"infinigen.max_ratio", "1"},    {"quest.offload", "1"}};
  spec.batches = {2};
  const auto all_in = run_sweep(spec, RunEnvironment{});
  for (const auto& p : all_in.points) {
    SCOPED_TRACE(p.axes.strategy);
    ASSERT_EQ(p.status, reports::PointStatus::ok) << p.reason;
    EXPECT_LT(p.accuracy.rel_l2, 1e-4);
    EXPECT_NEAR(p.accuracy.mass_recall, 1.0, 1e-9);
  }
}

TEST(Sweep, OomAndUnknownOptionsAreReported) {
  auto spec = small_spec({2048}, "structured");
  spec.accelerator.capacity_bytes = 512 * 1024;  // 2048 tokens of KV need 1 MiB
  spec.strategy_options = {{"offload.chunk_tokens", "256"}};
  const auto report = run_sweep(spec, RunEnvironment{});
  EXPECT_EQ(point(report, "full-gpu", 2048).status, reports::PointStatus::oom);
  // Quest has an offloaded deployment: by default it takes it rather than oom.
  EXPECT_EQ(point(report, "quest", 2048).status, reports::PointStatus::ok);
  EXPECT_EQ(point(report, "quest", 2048).strategy_params.at("deployment"), "offloaded");
  EXPECT_EQ(point(report, "cpu-only", 2048).status, reports::PointStatus::ok);
  EXPECT_EQ(point(report, "offload", 2048).status, reports::PointStatus::ok);
  spec.strategy_options = {{"quest.offload", "0"}};  // all-resident: oom, naming the fix
  spec.strategies = {"quest"};
  const auto resident = run_sweep(spec, RunEnvironment{});
  EXPECT_EQ(point(resident, "quest", 2048).status, reports::PointStatus::oom);
  EXPECT_NE(point(resident, "quest", 2048).reason.find("quest.offload=auto or 1"),
            std::string::npos);
  spec.strategies = {"all"};
  spec.strategy_options = {{"streamingllm.windw", "10"}};
  EXPECT_THROW(run_sweep(spec, RunEnvironment{}), Error);
}

}  // namespace
}  // namespace hb::bench
