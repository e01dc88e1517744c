// The whole-model block of each point (model/whole_model.h): the work outside the layers as
// traffic and its modeled time against hand-computed values, the blocks of a modeled and of a
// measured sweep, and the points that get none.
#include "model/whole_model.h"

#include <gtest/gtest.h>

#include "baselines/register.h"
#include "bench/runner.h"
#include "core/error.h"
#include "hybrid/register.h"
#include "model/model_run.h"

namespace hb::model {
namespace {

TEST(WholeModelOutside, TrafficOfLlama70bAtBatch8ByHand) {
  const Traffic t = outside_layers_traffic(find_model_preset("llama-3.1-70b"), 8);
  const int acc = static_cast<int>(Processor::accelerator);
  const int hbm = static_cast<int>(MemoryKind::accelerator);
  // rows 8 x 8192 x 2 = 131,072 B; logits 8 x 128,256 x 4 = 4,104,192 B; LM head 2,101,346,304 B.
  // Reads: embedding rows, norm rows + its 16,384 B weight, LM head weights + rows, logits.
  EXPECT_EQ(t.bytes_read[acc][hbm], 3 * 131072 + 16384 + 2101346304 + 4104192);
  // Writes: embedding rows, norm rows, logits, 8 token ids.
  EXPECT_EQ(t.bytes_written[acc][hbm], 2 * 131072 + 4104192 + 32);
  EXPECT_EQ(t.weight_bytes, 2101346304);
  EXPECT_DOUBLE_EQ(t.accelerator_flops, 2.0 * 8 * 8192 * 128256);
  EXPECT_EQ(t.d2h_bytes, 32);
  EXPECT_EQ(t.kernel_launches, 4);
  EXPECT_EQ(t.syncs, 1);
}

TEST(WholeModelOutside, ModeledTimeOnH100ByHand) {
  const PlatformModel h100 = load_platform_model("preset:h100-pcie5-cxl");
  const Traffic t = outside_layers_traffic(find_model_preset("llama-3.1-70b"), 8);
  const int acc = static_cast<int>(Processor::accelerator);
  const double bytes = static_cast<double>(t.bytes_read[acc][5] + t.bytes_written[acc][5]);
  // No gemm_gbps: every byte at 3350 GB/s x 0.75 (memory-bound: 16.8 GFLOP at 67 TFLOPS is
  // 0.25 ms, the bytes 0.84 ms), 4 launches x 5 us, 32 B at 50 GB/s + 7 us, one 10 us sync.
  const double expected = bytes / (3350 * 0.75) + 4 * 5e3 + (32 / 50.0 + 7e3) + 10e3;
  EXPECT_NEAR(modeled_outside_layers_ns(h100, find_model_preset("llama-3.1-70b"), 8), expected,
              1e-6 * expected);
  EXPECT_NEAR(expected, 876.9e3, 0.1e3);  // 0.877 ms, about 0.7 of one 70B layer's weights
}

bench::SweepSpec tiny_layer_spec() {
  register_baselines(StrategyRegistry::instance());
  register_hybrid(StrategyRegistry::instance());
  bench::SweepSpec s;
  s.scope = Scope::layer;
  s.models = {"qwen2.5-0.5b"};
  s.seq_lens = {256};
  s.batches = {1, 2};
  s.strategies = {"cpu-only"};
  s.decode_steps = 3;
  s.stop.warmup_steps = 1;
  s.stop.min_samples = 1;
  s.accuracy_steps = 1;
  s.accelerator.kind = hb::AcceleratorKind::cpu;
  s.accelerator.cpu_threads = 1;
  s.host_threads = 1;
  return s;
}

TEST(WholeModelBlocks, ModeledSweepPricesEveryPointOnItsPlatform) {
  std::vector<PlatformModel> platforms = load_platform_models({"preset:h200-pcie5-emr"});
  platforms.push_back(load_platform_model("preset:gh200-c2c"));
  platforms[1].economics = {};  // a profile without economics
  reports::Report r = run_model_sweep(tiny_layer_spec(), platforms, bench::RunEnvironment{});
  attach_modeled_whole_model(r, platforms);
  const ModelPreset& qwen = find_model_preset("qwen2.5-0.5b");
  ASSERT_EQ(r.points.size(), 4u);
  for (const auto& p : r.points) {
    SCOPED_TRACE(p.axes.key());
    ASSERT_TRUE(p.whole_model);
    const reports::WholeModel& w = *p.whole_model;
    const PlatformModel& m =
        p.axes.extra.at("platform") == "gh200-c2c" ? platforms[1] : platforms[0];
    EXPECT_EQ(w.layers, 24);
    EXPECT_DOUBLE_EQ(w.layer_step_ns, p.step.summary.median);
    EXPECT_DOUBLE_EQ(w.outside_layers_ns, modeled_outside_layers_ns(m, qwen, p.axes.batch));
    EXPECT_EQ(w.outside_layers_provenance, reports::Provenance::modeled);
    EXPECT_DOUBLE_EQ(w.itl_ns, 24 * p.step.summary.median + w.outside_layers_ns);
    EXPECT_DOUBLE_EQ(w.tokens_per_s, p.axes.batch * 1e9 / w.itl_ns);
    if (&m == &platforms[0]) {
      // h200-pcie5-emr: $43.26 per node-hour over 8 GPUs; (8 x 700 + 700 + 160) W over 8.
      ASSERT_TRUE(w.cost_per_mtok_usd);
      EXPECT_DOUBLE_EQ(*w.cost_per_mtok_usd, 43.26 / 8 / (w.tokens_per_s * 3600) * 1e6);
      EXPECT_DOUBLE_EQ(*w.tokens_per_s_per_w, w.tokens_per_s / ((8 * 700 + 700 + 160) / 8.0));
    } else {
      EXPECT_FALSE(w.cost_per_mtok_usd);
      EXPECT_NE(w.cost_blank_reason.find("no price for platform gh200-c2c"), std::string::npos);
      EXPECT_FALSE(w.tokens_per_s_per_w);
      EXPECT_FALSE(w.power_blank_reason.empty());
    }
  }
}

TEST(WholeModelBlocks, MeasuredSweepTimesTheLmHeadOnItsAccelerator) {
  const bench::SweepSpec spec = tiny_layer_spec();
  reports::Report r = bench::run_sweep(spec, bench::RunEnvironment{});
  attach_measured_whole_model(r, spec, PlatformEconomics{}, "", false);
  ASSERT_EQ(r.points.size(), 2u);
  for (const auto& p : r.points) {
    ASSERT_TRUE(p.whole_model) << p.axes.key();
    const reports::WholeModel& w = *p.whole_model;
    EXPECT_EQ(w.outside_layers_provenance, reports::Provenance::emulated);  // cpu accelerator
    EXPECT_GT(w.outside_layers_ns, 0);
    EXPECT_DOUBLE_EQ(w.itl_ns, 24 * p.step.summary.median + w.outside_layers_ns);
    EXPECT_FALSE(w.cost_per_mtok_usd);
    EXPECT_NE(w.cost_blank_reason.find("pass --price"), std::string::npos) << w.cost_blank_reason;
  }
  // An interrupted run times nothing more: no block.
  reports::Report cut = bench::run_sweep(spec, bench::RunEnvironment{});
  cut.interruption.interrupted = true;
  attach_measured_whole_model(cut, spec, PlatformEconomics{}, "", false);
  for (const auto& p : cut.points) EXPECT_FALSE(p.whole_model);
}

TEST(WholeModelBlocks, AttentionScopeAndUntimedPointsGetNone) {
  reports::Point p;
  p.axes.model = "qwen2.5-0.5b";
  p.step = {};
  EXPECT_EQ(whole_model_preset(p), nullptr);  // not timed
  static_cast<reports::Timing&>(p.step) = reports::Timing::from_samples({1e6, 1e6});
  EXPECT_EQ(whole_model_preset(p), nullptr);  // scope attention: a step is no layer
  p.axes.extra["scope"] = "layer";
  EXPECT_EQ(whole_model_preset(p), &find_model_preset("qwen2.5-0.5b"));
  p.axes.model = "trace:layer12";  // a trace's own shape: no layers, no vocabulary
  EXPECT_EQ(whole_model_preset(p), nullptr);
  p.axes.model = "qwen2.5-0.5b";
  p.status = reports::PointStatus::oom;
  EXPECT_EQ(whole_model_preset(p), nullptr);
}

TEST(WholeModelBlocks, WeightsLargerThanTheAcceleratorAreSaid) {
  const ModelPreset& big = find_model_preset("llama-3.1-70b");
  // 80 x 1,711,276,032 B of layers + 2 x 2,101,346,304 B = 141.1 GB against 80 GiB x 0.9 =
  // 77.3 GB on H100; B200's 180 GB x 0.9 = 162 GB holds them.
  const std::string h100 = weights_caveat(load_platform_model("h100-pcie5-cxl0"), big);
  EXPECT_NE(h100.find("llama-3.1-70b's weights (141.1 GB"), std::string::npos) << h100;
  EXPECT_NE(h100.find("usable accelerator memory (77.3 GB)"), std::string::npos) << h100;
  EXPECT_NE(h100.find("lower bound"), std::string::npos) << h100;
  EXPECT_EQ(weights_caveat(load_platform_model("b200-pcie5-emr"), big), "");
  EXPECT_EQ(
      weights_caveat(load_platform_model("h100-pcie5-cxl0"), find_model_preset("llama-3.1-8b")),
      "");
}

TEST(WholeModelOutside, StandInHasTheLmHeadsBytesAndFlops) {
  for (const char* name : {"qwen2.5-0.5b", "llama-3.1-70b", "opt-1.3b"}) {
    const ModelPreset& m = find_model_preset(name);
    const ModelPreset head = bench::lm_head_stand_in(m);
    const LayerDims d = layer_dims(head);
    EXPECT_FALSE(d.gated);
    // The FFN's two matrices hold hidden x vocab weights (every preset's vocabulary is even).
    EXPECT_EQ(int64_t{2} * d.hidden * d.ffn, int64_t{m.hidden} * m.vocab) << name;
  }
}

}  // namespace
}  // namespace hb::model
