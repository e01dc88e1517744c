// HybridGen against the fp64 reference: exact at ratio 1 and in LSE mode (through the runner,
// with a budget small enough that most of the KV lives on the host), and at any ratio exactly
// one softmax over the tokens it reports as attended.
#include <gtest/gtest.h>

#include "baselines/register.h"
#include "core/phase_names.h"
#include "hybrid/register.h"
#include "bench/runner.h"
#include "rig.h"

namespace hb::test {
namespace {

bench::SweepSpec exact_spec() {
  register_baselines(StrategyRegistry::instance());
  register_hybrid(StrategyRegistry::instance());
  bench::SweepSpec s;
  s.scope =
      Scope::attention;  // attention's own figures; layer scope: tests/bench/layer_scope_test.cpp
  s.models = {"qwen2.5-0.5b"};  // 14 q heads, 2 KV heads, d = 64: small and GQA (group 7)
  s.seq_lens = {600};
  s.decode_steps = 40;  // crosses two page boundaries: FIFO moves pages to the host
  s.strategies = {"hybridgen", "hybridgen-lse"};
  s.stop.warmup_steps = 1;
  s.stop.min_samples = 1000;  // run every step
  s.stop.timeout_s = 60;
  s.accuracy_steps = -1;  // score every timed step
  s.accelerator.kind = AcceleratorKind::cpu;
  s.accelerator.cpu_threads = 1;
  s.accelerator.capacity_bytes = 4 << 20;
  s.host_threads = 1;
  // 160 recent tokens on the accelerator, ~480 on the host.
  s.strategy_options = {{"hybridgen.ratio", "1"},
                        {"hybridgen.scheduler", "static"},
                        {"hybridgen.gpu_tokens", "160"},
                        {"hybridgen-lse.gpu_tokens", "160"},
                        {"hybridgen-lse.min_gpu_tokens", "32"},
                        // LSE is exact at any split: let the boundary move every interval.
                        {"hybridgen-lse.dead_band", "0"},
                        {"hybridgen-lse.boundary_gain", "1"}};
  return s;
}

TEST(HybridGenExact, RatioOneAndLseMatchTheReference) {
  auto report = bench::run_sweep(exact_spec(), bench::RunEnvironment{});
  ASSERT_EQ(report.points.size(), 2u);
  for (const auto& p : report.points) {
    SCOPED_TRACE(p.axes.strategy);
    ASSERT_EQ(p.status, reports::PointStatus::ok) << p.reason;
    EXPECT_EQ(p.strategy_params.at("all_kv_on_accelerator"), "no");
    EXPECT_EQ(p.accuracy.steps_scored, 39);
    EXPECT_LT(p.accuracy.rel_l2, 1e-5);
    EXPECT_GT(p.accuracy.cosine, 0.99999);
    EXPECT_DOUBLE_EQ(p.accuracy.mass_recall, 1.0);
    // The host really served most of the KV, and something crossed the link each step.
    const int64_t per_token_k = 2 * 64 * 2;  // one token's K, all KV heads, fp16
    EXPECT_GT(p.traffic_per_step.bytes_read[0][int(MemoryKind::local_dram)], 64 * per_token_k);
    EXPECT_GT(p.traffic_per_step.h2d_bytes, 0);
    EXPECT_GT(p.traffic_per_step.d2h_bytes, 0);
    for (const char* ph :
         {phase::kCpu, phase::kAccelerator, phase::kTransfer, phase::kMerge, phase::kMigrate})
      EXPECT_TRUE(p.phases.count(ph)) << ph;
    EXPECT_FALSE(p.trajectory.empty());
  }
  // Logit mode at ratio 1 ships every CPU token: 14 heads x ~480 rows x (4 + 64 * 2) bytes.
  const auto& logit =
      report.points[0].axes.strategy == "hybridgen" ? report.points[0] : report.points[1];
  EXPECT_GT(logit.traffic_per_step.h2d_bytes, 14 * 400 * (4 + 128));
  EXPECT_GT(logit.traffic_per_step.bytes_read[0][int(MemoryKind::local_dram)], 400 * 2 * 64 * 2);
  // LSE mode ships only the partial (o, lse), and its boundary moved while staying exact.
  const auto& lse =
      report.points[0].axes.strategy == "hybridgen-lse" ? report.points[0] : report.points[1];
  // (plus the pages the boundary moves brought up, averaged over the steps).
  EXPECT_GE(lse.traffic_per_step.h2d_bytes, 14 * (64 + 1) * 4);
  EXPECT_LT(lse.traffic_per_step.h2d_bytes, logit.traffic_per_step.h2d_bytes / 10);
  bool moved = false;
  for (const auto& row : lse.trajectory) moved |= row.at("next_gpu_window") != row.at("gpu_window");
  EXPECT_TRUE(moved);
}

TEST(HybridGenExact, AllKvFitsMeansDenseOnTheAccelerator) {
  auto spec = exact_spec();
  spec.strategy_options.clear();
  spec.accelerator.capacity_bytes = 64 << 20;
  auto report = bench::run_sweep(spec, bench::RunEnvironment{});
  for (const auto& p : report.points) {
    SCOPED_TRACE(p.axes.strategy);
    ASSERT_EQ(p.status, reports::PointStatus::ok) << p.reason;
    EXPECT_EQ(p.strategy_params.at("all_kv_on_accelerator"), "yes (KV fits; CPU side idle)");
    EXPECT_LT(p.accuracy.rel_l2, 1e-5);
    EXPECT_EQ(p.traffic_per_step.total_read(Processor::cpu), 0);
    EXPECT_EQ(p.traffic_per_step.h2d_bytes, 0);
  }
}

// Direct drive: at ratio < 1 the output is exactly one softmax over [selected CPU tokens |
// accelerator tokens], the set reported in `attended`, through FIFO moves and promotions.
TEST(HybridGenExact, OneSoftmaxOverTheAttendedTokens) {
  const AttentionShape shape{8, 2, 64, DType::f16};
  Rig rig(shape, 1000, 24, 1 << 20,
          {tier(MemoryKind::local_dram, 0), tier(MemoryKind::cxl, 1, true)});
  auto hg = make_hybridgen({{"hybridgen.ratio", "0.1"},
                            {"hybridgen.scheduler", "static"},
                            {"hybridgen.gpu_tokens", "128"},
                            {"hybridgen.hot_share", "0.3"},
                            {"hybridgen.migrate_every", "4"}});
  ASSERT_EQ(hg->plan(rig.problem, rig.platform).status, PlanStatus::ok);
  hg->load();
  ASSERT_GT(hg->hot_slots(), 0);
  const int d = shape.head_dim;
  for (int s = 0; s < 24; ++s) {
    hg->prepare_step(s);
    StepResult out;
    hg->step(s, out);
    hg->fill_attended(s, out);
    ASSERT_EQ(out.attended.size(), static_cast<size_t>(shape.q_heads)) << "step " << s;
    for (int qh = 0; qh < shape.q_heads; ++qh) {
      const auto& att = out.attended[qh];
      // ~10% of ~870 host tokens plus the accelerator's window (and promoted pages).
      EXPECT_GT(att.size(), 180u);
      EXPECT_LT(att.size(), static_cast<size_t>(rig.problem.context_at(s)));
      const auto want = rig.attend(0, s, qh, att);
      EXPECT_LT(rel_err(out.o.data() + qh * d, want), 2e-5) << "step " << s << " head " << qh;
    }
  }
  // Promotions happened on the way (whole pages to the accelerator's hot slots).
  EXPECT_GT(hg->pages_migrated(), 0);
  int hot = 0;
  for (int h = 0; h < shape.kv_heads; ++h)
    for (int64_t i = 0; i < 60; ++i) hot += hg->page_home(0, h, i) == hybrid::PageHome::hot;
  EXPECT_GT(hot, 0);
}

TEST(HybridGenExact, BatchOfSequencesIsExactPerSequence) {
  const AttentionShape shape{8, 2, 64, DType::f16};
  Rig rig(shape, 500, 20, 2 << 20, {tier(MemoryKind::local_dram, 0)}, {}, 3);
  auto hg = make_hybridgen({{"hybridgen.ratio", "1"},
                            {"hybridgen.scheduler", "static"},
                            {"hybridgen.gpu_tokens", "64"}});
  ASSERT_EQ(hg->plan(rig.problem, rig.platform).status, PlanStatus::ok);
  hg->load();
  const int d = shape.head_dim, H = shape.q_heads;
  for (int s = 0; s < 20; ++s) {
    hg->prepare_step(s);
    StepResult out;
    hg->step(s, out);
    hg->fill_attended(s, out);
    EXPECT_TRUE(out.attended.empty());  // exact: every token attended
    for (int b = 0; b < 3; ++b)
      for (int qh = 0; qh < H; ++qh) {
        const auto want = rig.attend(b, s, qh, rig.all_positions(s));
        EXPECT_LT(rel_err(out.o.data() + (b * H + qh) * d, want), 2e-5)
            << "seq " << b << " step " << s;
      }
  }
}

TEST(HybridGenExact, OptionsAreValidated) {
  EXPECT_THROW(make_hybridgen({{"hybridgen.merge", "softmax"}}), Error);
  EXPECT_THROW(make_hybridgen({{"hybridgen.ratio", "0"}}), Error);
  EXPECT_THROW(make_hybridgen({{"hybridgen.ratio", "1.5"}}), Error);
  EXPECT_THROW(make_hybridgen({{"hybridgen.kv_mapping", "random"}}), Error);
  EXPECT_THROW(make_hybridgen({{"hybridgen.mapping", "random"}}), Error);
  EXPECT_THROW(make_hybridgen({{"hybridgen.overlap", "maybe"}}), Error);
  EXPECT_THROW(make_hybridgen({{"hybridgen.bogus", "1"}}), Error);  // unknown keys are errors
  EXPECT_NO_THROW(make_hybridgen({{"hybridgen.merge", "lse"}, {"hybridgen.scheduler", "static"}}));
  register_hybrid(StrategyRegistry::instance());
  for (const char* n :
       {"hybridgen", "hybridgen-lse", "hybridgen-static", "hybridgen-naive", "hybridgen-serial"})
    EXPECT_EQ(StrategyRegistry::instance().find(n).family, "hybrid") << n;
}

}  // namespace
}  // namespace hb::test
