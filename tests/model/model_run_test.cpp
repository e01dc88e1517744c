// Model mode end to end: strategies really run (accuracy and traffic are real), timings are
// the model's, points are labelled "modeled" with the platform; validate-model on a tiny sweep.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "baselines/register.h"
#include "core/error.h"
#include "core/model_presets.h"
#include "hybrid/register.h"
#include "reports/json_io.h"
#include "model/calibrate.h"
#include "model/model_run.h"
#include "model/validate.h"

namespace hb::model {
namespace {

bench::SweepSpec tiny_spec() {
  register_baselines(StrategyRegistry::instance());
  register_hybrid(StrategyRegistry::instance());
  bench::SweepSpec s;
  s.scope =
      Scope::attention;  // attention's own figures; layer scope: tests/bench/layer_scope_test.cpp
  s.models = {"qwen2.5-0.5b"};  // 14 q heads, 2 KV heads, d = 64
  s.seq_lens = {256, 512};
  s.strategies = {"full-gpu", "cpu-only", "streamingllm"};
  s.strategy_options["streamingllm.window"] = "64";
  s.decode_steps = 5;
  s.stop.warmup_steps = 1;
  s.stop.min_samples = 2;
  s.accuracy_steps = 2;
  s.accelerator.kind = hb::AcceleratorKind::cpu;
  s.accelerator.cpu_threads = 1;
  s.host_threads = 1;
  return s;
}

const reports::Point& find(const reports::Report& r, const std::string& strategy, int64_t n,
                           const std::string& platform = "") {
  for (const auto& p : r.points)
    if (p.axes.strategy == strategy && p.axes.seq_len == n &&
        (platform.empty() ||
         (p.axes.extra.count("platform") && p.axes.extra.at("platform") == platform)))
      return p;
  throw Error("no point " + strategy + " " + std::to_string(n) + " " + platform);
}

TEST(ModelRun, PointsAreModeledWithRealAccuracy) {
  auto spec = tiny_spec();
  spec.accelerator.capacity_bytes = 64 << 20;  // the same budget for both runs: the same plans
  const auto platforms = load_platform_models({"preset:a100-40gb-pcie4-spr", "preset:gh200-c2c"});
  const reports::Report modeled = run_model_sweep(spec, platforms, bench::RunEnvironment{});
  const reports::Report measured = bench::run_sweep(spec, bench::RunEnvironment{});
  ASSERT_EQ(modeled.points.size(), 2 * measured.points.size());
  EXPECT_EQ(modeled.context.sweep.at("mode"), "model");
  EXPECT_EQ(modeled.context.sweep.at("model.platforms"), "a100-40gb-pcie4-spr,gh200-c2c");
  for (const auto& p : modeled.points) {
    SCOPED_TRACE(p.axes.key());
    ASSERT_EQ(p.status, reports::PointStatus::ok) << p.reason;
    EXPECT_EQ(p.provenance, reports::Provenance::modeled);
    EXPECT_EQ(p.axes.accelerator, "cuda");  // the platform's accelerator, not the one that executed
    ASSERT_TRUE(p.axes.extra.count("platform"));
    EXPECT_EQ(p.strategy_params.at("model.platform"), p.axes.extra.at("platform"));
    EXPECT_FALSE(p.strategy_params.at("model.overlap").empty());
    EXPECT_GE(p.step.summary.count, 2);
    EXPECT_GT(p.step.summary.median, 0);
    // The same selection ran: accuracy is that of the measured run, exactly.
    const auto& m = find(measured, p.axes.strategy, p.axes.seq_len);
    EXPECT_EQ(p.accuracy.steps_scored, m.accuracy.steps_scored);
    EXPECT_DOUBLE_EQ(p.accuracy.rel_l2, m.accuracy.rel_l2);
    EXPECT_DOUBLE_EQ(p.accuracy.mass_recall, m.accuracy.mass_recall);
    // The same per-step traffic (averaged over fewer steps here: modeled samples converge at once).
    EXPECT_EQ(p.traffic_per_step.h2d_bytes, m.traffic_per_step.h2d_bytes);
    EXPECT_EQ(p.traffic_per_step.syncs, m.traffic_per_step.syncs);
    EXPECT_NEAR(p.traffic_per_step.total_read(Processor::cpu),
                m.traffic_per_step.total_read(Processor::cpu),
                0.02 * m.traffic_per_step.total_read(Processor::cpu));
    // Phases are the model's resources.
    for (const auto& [ph, t] : p.phases)
      EXPECT_TRUE(ph == "cpu" || ph == "accelerator" || ph == "transfer" || ph == "sync") << ph;
  }
  // streamingllm drops tokens: its (real) recall is below 1 at 512 tokens, full-gpu's is 1.
  EXPECT_LT(find(modeled, "streamingllm", 512, "gh200-c2c").accuracy.mass_recall, 1.0);
  EXPECT_DOUBLE_EQ(find(modeled, "full-gpu", 512, "gh200-c2c").accuracy.mass_recall, 1.0);
  // Each modeled time is the model of the step's traffic: cpu-only on A100's host is the host
  // CPU's roofline plus PCIe; GH200's C2C link and Grace make the same traffic cheaper.
  const auto& a = find(modeled, "cpu-only", 512, "a100-40gb-pcie4-spr");
  const auto& g = find(modeled, "cpu-only", 512, "gh200-c2c");
  const ModeledStep expect =
      model_step(a.traffic_per_step, OverlapStructure::serial(), platforms[0]);
  EXPECT_NEAR(a.step.summary.median, expect.total_ns,
              0.02 * expect.total_ns);  // steps differ by one token
  EXPECT_LT(g.step.summary.median, a.step.summary.median);
  // Speedups only compare strategies of one platform.
  for (const auto& s : modeled.speedups) {
    EXPECT_EQ(s.provenance, reports::Provenance::modeled);
    EXPECT_NE(s.group_key.find("platform="), std::string::npos) << s.group_key;
  }
}

TEST(ModelRun, BudgetComesFromTheProfileAndModelWeights) {
  auto spec = tiny_spec();
  spec.strategies = {"full-gpu"};
  spec.strategy_options.clear();
  spec.seq_lens = {256};
  spec.models = {"qwen2.5-0.5b", "qwen2.5-32b"};  // 32B's weights do not fit in 40 GB
  const auto r = run_model_sweep(spec, load_platform_models({"preset:a100-40gb-pcie4-spr"}),
                                 bench::RunEnvironment{});
  ASSERT_EQ(r.points.size(), 2u);
  for (const auto& p : r.points) {
    if (p.axes.model == "qwen2.5-0.5b") {
      EXPECT_EQ(p.status, reports::PointStatus::ok) << p.reason;
    } else {  // nothing of a model whose weights do not fit runs: oom, saying why
      EXPECT_EQ(p.status, reports::PointStatus::oom);
      EXPECT_NE(p.reason.find("qwen2.5-32b's weights"), std::string::npos) << p.reason;
      EXPECT_NE(p.reason.find("exceed a100-40gb-pcie4-spr's usable accelerator memory"),
                std::string::npos)
          << p.reason;
    }
  }
  EXPECT_EQ(r.context.sweep.at("model.kv_budget_bytes.a100-40gb-pcie4-spr.qwen2.5-32b"),
            "0 (the weights do not fit)");
  // --accelerator-memory is every layer's KV budget, whatever the weights: the 32B model runs.
  spec.accelerator.capacity_bytes = int64_t{64} << 20;
  const auto given = run_model_sweep(spec, load_platform_models({"preset:a100-40gb-pcie4-spr"}),
                                     bench::RunEnvironment{});
  for (const auto& p : given.points) EXPECT_EQ(p.status, reports::PointStatus::ok) << p.reason;
}

// A batch of B executes one sequence (the batch's first, the same as batch 1's) on a 1/B share of
// the budget and is priced for B (model/model_sweep.cpp, sampled_batch): its traffic is B times the
// one sequence's but its launches and syncs, its placement B times, its accuracy that sequence's; a
// KV that fits one sequence's budget but not the batch's is oom, per sequence.
TEST(ModelRun, ABatchExecutesOneSequenceAndIsPricedForTheBatch) {
  auto spec = tiny_spec();
  spec.seq_lens = {256};
  spec.batches = {1, 3};
  spec.strategies = {"cpu-only", "streamingllm"};
  spec.accelerator.capacity_bytes = 64 << 20;
  const auto platforms = load_platform_models({"preset:a100-40gb-pcie4-spr"});
  const reports::Report r = run_model_sweep(spec, platforms, bench::RunEnvironment{});
  EXPECT_NE(r.context.sweep.count("model.batch"), 0u);
  for (const std::string s : {"cpu-only", "streamingllm"}) {
    const reports::Point *one = nullptr, *three = nullptr;
    for (const auto& p : r.points)
      if (p.axes.strategy == s) (p.axes.batch == 1 ? one : three) = &p;
    ASSERT_TRUE(one && three) << s;
    ASSERT_EQ(three->status, reports::PointStatus::ok) << three->reason;
    EXPECT_EQ(one->strategy_params.count("model.batch"), 0u);
    EXPECT_NE(three->strategy_params.at("model.batch").find("1 of the batch's 3"),
              std::string::npos);
    const Traffic &t1 = one->traffic_per_step, &t3 = three->traffic_per_step;
    int64_t moved = 0;
    for (int proc = 0; proc < 2; ++proc)
      for (int k = 0; k < kMemoryKinds; ++k) {
        EXPECT_NEAR(t3.bytes_read[proc][k], 3 * t1.bytes_read[proc][k], 3) << s;
        EXPECT_NEAR(t3.bytes_written[proc][k], 3 * t1.bytes_written[proc][k], 3) << s;
        moved += t1.bytes_read[proc][k];
      }
    EXPECT_GT(moved, 0) << s;
    EXPECT_NEAR(t3.accelerator_flops + t3.cpu_flops, 3 * (t1.accelerator_flops + t1.cpu_flops),
                1e-6 * t3.accelerator_flops + 1);
    EXPECT_EQ(t3.kernel_launches, t1.kernel_launches) << s;
    EXPECT_EQ(t3.syncs, t1.syncs) << s;
    ASSERT_EQ(three->placement.size(), one->placement.size());
    for (size_t i = 0; i < one->placement.size(); ++i)
      EXPECT_EQ(three->placement[i].bytes, 3 * one->placement[i].bytes);
    EXPECT_DOUBLE_EQ(three->accuracy.mass_recall, one->accuracy.mass_recall) << s;
    EXPECT_GT(three->step.summary.median, one->step.summary.median) << s;
  }
  // full-gpu's KV (2 KV heads x 64 x K,V x fp16 = 512 B a token, 261 tokens in 16-token pages)
  // fits twice in the budget: batch 1 runs, a batch of 3 is oom on its 1/3 share.
  spec.strategies = {"full-gpu"};
  spec.strategy_options.clear();
  spec.accelerator.capacity_bytes = 2 * 272 * 512;
  const reports::Report fit = run_model_sweep(spec, platforms, bench::RunEnvironment{});
  ASSERT_EQ(fit.points.size(), 2u);
  for (const auto& p : fit.points) {
    if (p.axes.batch == 1) {
      EXPECT_EQ(p.status, reports::PointStatus::ok) << p.reason;
    } else {
      EXPECT_EQ(p.status, reports::PointStatus::oom);
      EXPECT_NE(p.reason.find("per sequence"), std::string::npos) << p.reason;
    }
  }
}

TEST(ModelRun, HostTiersFollowTheProfile) {
  const PlatformModel m = load_platform_model("preset:h100-pcie5-cxl");
  const auto tiers = host_tiers_for(m);
  ASSERT_EQ(tiers.size(), 2u);
  EXPECT_EQ(tiers[0].location.kind, MemoryKind::local_dram);
  EXPECT_EQ(tiers[1].location.kind, MemoryKind::cxl);
  EXPECT_TRUE(tiers[1].location.emulated);  // labels on this machine's memory
  EXPECT_EQ(tiers[1].free_bytes, m.tiers[1].capacity_bytes);
  EXPECT_DOUBLE_EQ(tiers[1].read_bandwidth_bytes_per_s, 56e9);
}

// A point as the report writes it: every figure, the modeled timing and HybridGen's scheduler
// trajectory included (its times are its platform's modeled ones, core/step_times.h).
std::string point_json(const reports::Point& p) {
  reports::Report r;
  r.points = {p};
  return nlohmann::json::parse(reports::to_json_text(r)).at("points").at(0).dump(1);
}

// Issue 18 part 5: several platforms in one sweep share the workload, the reference and the
// executions their plans share, and give exactly the points of one sweep per platform. The
// platforms differ where it matters: the small one cannot hold the weights (it runs nothing),
// h100 adds a CXL tier (HybridGen's placement differs), gh200 and h200 plan alike.
TEST(ModelRun, SharedPlatformsGiveTheSamePointsAsOneSweepEach) {
  auto spec = tiny_spec();
  spec.seq_lens = {512, 4096};
  spec.strategies = {"full-gpu", "cpu-only", "streamingllm",    "h2o",
                     "quest",    "offload",  "hybridgen-static"};
  PlatformModel small = load_platform_model("preset:a100-40gb-pcie4-spr");
  small.name = "small-hbm";  // the weights do not fit: every point oom, nothing executed
  small.accelerator.memory_bytes = int64_t{256} << 20;
  const std::vector<PlatformModel> platforms = {load_platform_model("preset:gh200-c2c"), small,
                                                load_platform_model("preset:h100-pcie5-cxl"),
                                                load_platform_model("preset:h200-pcie5-emr")};
  std::vector<std::string> seen;  // progress labels: each lane says which platform it runs
  const reports::Report together =
      run_model_sweep(spec, platforms, bench::RunEnvironment{},
                      [&](const bench::Progress& p) { seen.push_back(p.label); });
  ASSERT_EQ(together.points.size(), platforms.size() * 2 * spec.strategies.size());
  for (const auto& p : together.points)
    if (p.axes.extra.at("platform") == "small-hbm") {
      EXPECT_EQ(p.status, reports::PointStatus::oom) << p.axes.key();
      EXPECT_NE(p.reason.find("weights"), std::string::npos) << p.reason;
      EXPECT_EQ(p.kv_fit_fraction, 0.0) << p.axes.key();
    }
  EXPECT_FALSE(std::any_of(seen.begin(), seen.end(), [](const std::string& l) {
    return l.find("[small-hbm]") != std::string::npos && l.find(" loading") != std::string::npos;
  }));
  // Executions were shared: fewer strategies loaded than points (gh200 and h200 plan alike).
  const auto loads = std::count_if(seen.begin(), seen.end(), [](const std::string& l) {
    return l.size() > 8 && l.compare(l.size() - 8, 8, " loading") == 0;
  });
  EXPECT_GT(loads, 0);
  EXPECT_LE(loads, static_cast<long>(3 * 2 * spec.strategies.size()));
  for (const auto& m : platforms) {
    SCOPED_TRACE(m.name);
    const reports::Report alone = run_model_sweep(spec, {m}, bench::RunEnvironment{});
    for (const auto& p : alone.points) {
      SCOPED_TRACE(p.axes.key());
      EXPECT_EQ(point_json(find(together, p.axes.strategy, p.axes.seq_len, m.name)), point_json(p));
    }
    EXPECT_EQ(together.context.sweep.at("model.kv_budget_bytes." + m.name + ".qwen2.5-0.5b"),
              alone.context.sweep.at("model.kv_budget_bytes." + m.name + ".qwen2.5-0.5b"));
    if (m.name == "small-hbm") continue;  // runs nothing, so says nothing
    EXPECT_TRUE(std::any_of(seen.begin(), seen.end(), [&](const std::string& l) {
      return l.find("[" + m.name + "]") != std::string::npos;
    }));
  }
}

// HybridGen's feedback scheduler is fed the projected platform's modeled times: two runs give the
// same points, its trajectory's times included; each platform executes its own trajectory (no
// shared execution), and the split follows the platform. Both are CPU-bound with the window at
// the accelerator's capacity, so only the top-k ratio can move: on the a100 node the shipped V
// rows cost SPR's DDR5 bandwidth and the ratio comes down; Grace's CPU side is bound by its
// compute, the rows cost nothing there (roofline), and the ratio holds.
TEST(ModelRun, HybridGensSchedulerAdaptsToTheProjectedPlatform) {
  auto spec = tiny_spec();
  spec.seq_lens = {32768};
  spec.decode_steps = 9;  // two decisions
  spec.strategies = {"hybridgen"};
  spec.strategy_options.clear();
  spec.accelerator.capacity_bytes = 8 << 20;  // a third of the KV on the accelerator
  const auto platforms = load_platform_models({"preset:a100-40gb-pcie4-spr", "preset:gh200-c2c"});
  const reports::Report one = run_model_sweep(spec, platforms, bench::RunEnvironment{});
  const reports::Report two = run_model_sweep(spec, platforms, bench::RunEnvironment{});
  ASSERT_EQ(one.points.size(), 2u);
  for (size_t i = 0; i < one.points.size(); ++i) {
    const reports::Point& p = one.points[i];
    SCOPED_TRACE(p.axes.key());
    ASSERT_EQ(p.status, reports::PointStatus::ok) << p.reason;
    EXPECT_EQ(p.strategy_params.at("scheduler.times"), "modeled on " + p.axes.extra.at("platform"));
    EXPECT_EQ(point_json(p), point_json(two.points[i]));
    ASSERT_EQ(p.trajectory.size(), 2u);
  }
  const reports::Point& a100 = find(one, "hybridgen", 32768, "a100-40gb-pcie4-spr");
  const reports::Point& gh200 = find(one, "hybridgen", 32768, "gh200-c2c");
  for (size_t r = 0; r < a100.trajectory.size(); ++r) {
    const auto &a = a100.trajectory[r], &g = gh200.trajectory[r];
    EXPECT_GT(a.at("cpu_ns"), a.at("accelerator_ns"));  // CPU-bound on both
    EXPECT_GT(g.at("cpu_ns"), g.at("accelerator_ns"));
    EXPECT_GT(a.at("rows_ns"), 0);
    EXPECT_GT(a.at("cpu_ns"), g.at("cpu_ns"));  // each its own platform's price
  }
  const auto &first_a = a100.trajectory.front(), &first_g = gh200.trajectory.front();
  EXPECT_EQ(first_a.at("ratio"), first_g.at("ratio"));  // the same start
  EXPECT_LT(first_a.at("next_ratio"), first_a.at("ratio"));
  EXPECT_EQ(first_g.at("next_ratio"), first_g.at("ratio"));
  EXPECT_LT(a100.trajectory.back().at("next_ratio"), gh200.trajectory.back().at("next_ratio"));
}

// The host-memory check counts the sequences a unit executes: model mode's batch of 8 executes one
// (model/sampled_batch.h), so a budget that holds one sequence's workload, not eight, refuses the
// measured sweep and runs the modeled one.
TEST(ModelRun, HostMemoryIsCheckedForTheExecutedSequences) {
  auto spec = tiny_spec();
  spec.seq_lens = {512};
  spec.batches = {8};
  spec.strategies = {"cpu-only"};
  spec.strategy_options.clear();
  bench::RunEnvironment env;
  env.host_memory_budget_bytes = 4 << 20;  // one sequence's workload is about 1 MiB
  try {
    bench::run_sweep(spec, env);
    ADD_FAILURE() << "eight sequences' workloads fit 4 MiB";
  } catch (const Error& e) {
    EXPECT_NE(e.problem().find("x batch 8"), std::string::npos) << e.problem();
  }
  const auto platforms = load_platform_models({"preset:h200-pcie5-emr"});
  const reports::Report r = run_model_sweep(spec, platforms, env);
  ASSERT_EQ(r.points.size(), 1u);
  EXPECT_EQ(r.points[0].status, reports::PointStatus::ok) << r.points[0].reason;
  EXPECT_EQ(r.points[0].axes.batch, 8);
  env.host_memory_budget_bytes = 512 << 10;  // not even one
  EXPECT_THROW(run_model_sweep(spec, platforms, env), Error);
}

// The batches at one length execute the same one sequence: the unit after the first takes over
// its workload and reference (model/model_sweep.h, bench::UnitInputs) and gives the points it
// gives alone.
TEST(ModelRun, BatchesAtOneLengthShareTheWorkloadAndReference) {
  auto spec = tiny_spec();
  spec.batches = {1, 4};
  spec.strategies = {"cpu-only", "streamingllm", "h2o"};
  const auto platforms = load_platform_models({"preset:h200-pcie5-emr"});
  std::vector<std::string> seen;
  const reports::Report both =
      run_model_sweep(spec, platforms, bench::RunEnvironment{},
                      [&](const bench::Progress& p) { seen.push_back(p.label); });
  auto count = [&](const std::string& what) {
    return std::count_if(seen.begin(), seen.end(),
                         [&](const std::string& l) { return l.find(what) != std::string::npos; });
  };
  EXPECT_EQ(count("generating workload"), 2);  // one per length: 256 and 512
  EXPECT_EQ(count("the previous unit's workload and reference"), 2);
  spec.batches = {4};
  const reports::Report alone = run_model_sweep(spec, platforms, bench::RunEnvironment{});
  ASSERT_EQ(alone.points.size(), 2 * spec.strategies.size());
  for (const auto& p : alone.points)
    for (const auto& q : both.points) {
      if (q.axes.key() == p.axes.key()) {
        EXPECT_EQ(point_json(q), point_json(p)) << p.axes.key();
      }
    }
}

// A model prices one layer's step: a stack of layers is refused before anything runs (exit 2).
TEST(ModelRun, RefusesALayerStack) {
  auto spec = tiny_spec();
  spec.layers = 2;
  try {
    run_model_sweep(spec, load_platform_models({"preset:h200-pcie5-emr"}), bench::RunEnvironment{});
    ADD_FAILURE() << "a stack ran in model mode";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage);
    EXPECT_NE(e.problem().find("--layers 2"), std::string::npos) << e.problem();
  }
}

// A quick calibration of this machine on working sets of 1 to 8 MiB.
CalibrationOptions tiny_calibration() {
  CalibrationOptions co;
  co.host_threads = 1;
  co.accelerator_threads = 1;
  co.shape = find_model_preset("qwen2.5-0.5b").shape;
  co.min_bytes = size_t{1} << 20;
  co.max_bytes = size_t{8} << 20;
  co.seconds_per_figure = 0.02;
  co.flush_bytes = size_t{4} << 20;
  return co;
}

TEST(ValidateModel, TinySweepPricesTheMeasuredSteps) {
  auto spec = tiny_spec();
  spec.strategies = {"cpu-only", "full-gpu"};
  spec.strategy_options.clear();
  spec.seq_lens = {4096, 8192};  // long enough that cpu-only's attention outweighs its two syncs
  const CalibrationOptions co = tiny_calibration();
  PlatformModel base;
  base.tiers = {{MemoryKind::local_dram, -1, "dram", int64_t{8} << 30, 10, 100, false}};
  PlatformModel calibrated = calibrate_this_machine(base, co);
  EXPECT_EQ(calibrated.source, PlatformSource::calibrated);
  EXPECT_GT(calibrated.accelerator.sync_us, 0);
  // Which strategies count as CPU-bound must not depend on how busy the machine was while the
  // sync round trip was calibrated (80 us per sync was seen under a parallel build, which made
  // cpu-only's two syncs outweigh its attention): pin the overheads, keep the measured roofs.
  calibrated.accelerator.sync_us = 2;
  calibrated.accelerator.launch_us = 1;
  const PlatformModel& m = calibrated;
  EXPECT_EQ(m.accelerator.kind, "cpu");
  EXPECT_GT(m.cpu.attention_gflops_per_core, 0);
  EXPECT_GT(m.accelerator.sync_us, 0);
  ASSERT_EQ(m.cpu.read_curve.points.size(), 4u);  // 1, 2, 4, 8 MiB
  EXPECT_EQ(m.cpu.read_curve.points.back().first, 8.0 * (1 << 20));
  EXPECT_FALSE(m.accelerator.memory_curve.empty());
  EXPECT_FALSE(m.links[0].copy_curve.empty());
  ASSERT_NO_THROW(m.validate());
  const Validation v = validate_model(spec.validate(), bench::RunEnvironment{}, m);
  ASSERT_EQ(v.points.size(), 4u);
  for (const auto& p : v.points) {
    SCOPED_TRACE(p.axes.strategy + " " + std::to_string(p.axes.seq_len));
    ASSERT_EQ(p.status, reports::PointStatus::ok) << p.reason;
    EXPECT_GT(p.measured_ns, 0);
    EXPECT_GT(p.modeled_ns, 0);
    EXPECT_TRUE(std::isfinite(p.error));
    EXPECT_NEAR(p.error, (p.modeled_ns - p.measured_ns) / p.measured_ns, 1e-12);
    EXPECT_FALSE(p.overlap.empty());
  }
  // The measured run stays a measurement, with the prediction of the same steps alongside.
  for (size_t i = 0; i < v.measured.points.size(); ++i) {
    const auto& p = v.measured.points[i];
    EXPECT_EQ(p.provenance, reports::Provenance::emulated);
    ASSERT_TRUE(p.modeled.present());
    EXPECT_EQ(p.modeled.platform, m.name);
    EXPECT_EQ(p.modeled.step.summary.count, p.step.summary.count);
    EXPECT_NEAR(p.modeled.step.summary.median, v.points[i].modeled_ns,
                1e-6 * v.points[i].modeled_ns);
    EXPECT_NEAR(p.modeled.error_vs_measured, v.points[i].error, 1e-9);
  }
  ASSERT_EQ(v.strategies.size(), 2u);
  EXPECT_EQ(v.strategies[0].strategy, "cpu-only");
  EXPECT_TRUE(v.strategies[0].cpu_bound);
  EXPECT_FALSE(v.strategies[1].cpu_bound);  // full-gpu runs on the accelerator
  const std::string text = validation_text(v, 0.15);
  EXPECT_NE(text.find("Goal: |error| <= 15% on the CPU-bound strategies (cpu-only)"),
            std::string::npos)
      << text;
  for (const auto& p : v.points) EXPECT_LE(p.measured_p10_ns, p.measured_ns);
  EXPECT_TRUE(goal_met(v, 1e9));
  EXPECT_FALSE(goal_met(v, -1));
  EXPECT_FALSE(v.live);
  // With live ceilings, each step is priced with ceilings re-measured next to it; the
  // once-calibrated figures stay alongside.
  const Validation lv = validate_model(spec.validate(), bench::RunEnvironment{}, m, {}, &co);
  EXPECT_TRUE(lv.live);
  for (const auto& p : lv.points) {
    ASSERT_EQ(p.status, reports::PointStatus::ok) << p.reason;
    EXPECT_GT(p.modeled_ns, 0);
    EXPECT_GT(p.modeled_static_ns, 0);
  }
  EXPECT_NE(validation_text(lv, 0.15).find("live"), std::string::npos);
  const std::string json = validation_json(v, 0.15);
  EXPECT_NE(json.find("\"schema\": \"hybridbench.model-validation/1\""), std::string::npos);
  EXPECT_NE(json.find("calibrated on this machine"),
            std::string::npos);  // figures keep their sources
}

// The command line: `run --mode model` writes modeled points; misuse is a usage error.
int run_cli(const std::string& args, std::string* out = nullptr) {
  const std::string log = testing::TempDir() + "hb_model_cli.log";
  const int rc = std::system((std::string(HB_BINARY) + " " + args + " > " + log + " 2>&1").c_str());
  if (out) {
    std::ifstream f(log);
    std::stringstream ss;
    ss << f.rdbuf();
    *out = ss.str();
  }
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

TEST(ModelCli, RunModeModelAndErrors) {
  if (!std::ifstream(HB_BINARY)) GTEST_SKIP() << "hybridbench not built";
  const std::string json = testing::TempDir() + "hb_model_cli.json";
  const std::string tiny =
      " --model qwen2.5-0.5b --seq-len 256 --decode-steps 4 --warmup 1 --min-samples 2 "
      "--accuracy-steps 1 --accelerator-threads 1 --host-threads 1 -q --out " +
      json;
  std::string out;
  ASSERT_EQ(run_cli("run --mode model --platform preset:h200-pcie5-emr,preset:gh200-c2c --strategy "
                    "cpu-only,full-gpu" +
                        tiny,
                    &out),
            0)
      << out;
  const reports::Report r = reports::read_report(json);
  ASSERT_EQ(r.points.size(), 4u);
  for (const auto& p : r.points) {
    EXPECT_EQ(p.provenance, reports::Provenance::modeled);
    EXPECT_TRUE(p.axes.extra.count("platform"));
  }
  std::remove(json.c_str());
  // Measure mode with one profile: measured points, the model's prediction alongside, shown by
  // `report`.
  ASSERT_EQ(run_cli("run --platform preset:gh200-c2c --strategy cpu-only" + tiny, &out), 0) << out;
  const reports::Report side = reports::read_report(json);
  ASSERT_EQ(side.points.size(), 1u);
  EXPECT_NE(side.points[0].provenance, reports::Provenance::modeled);
  ASSERT_TRUE(side.points[0].modeled.present());
  EXPECT_EQ(side.points[0].modeled.platform, "gh200-c2c");
  ASSERT_EQ(run_cli("report " + json, &out), 0) << out;
  EXPECT_NE(out.find("Measured | modeled on gh200-c2c"), std::string::npos) << out;
  std::remove(json.c_str());
  EXPECT_EQ(
      run_cli("run --platform preset:gh200-c2c,preset:a100-40gb-pcie4-spr --strategy cpu-only -q",
              &out),
      2)
      << out;
  EXPECT_NE(out.find("--mode model"), std::string::npos) << out;
  EXPECT_EQ(run_cli("run --mode model --strategy cpu-only -q", &out), 2) << out;
  EXPECT_NE(out.find("no platform profile"), std::string::npos) << out;
  EXPECT_EQ(run_cli("run --mode model --platform /nonexistent.json -q", &out), 2) << out;
}

}  // namespace
}  // namespace hb::model
