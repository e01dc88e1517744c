// Layer scope (bench/layer_scope.h): any strategy wrapped with the layer's GEMMs and cut
// into micro-batches attends exactly as it does alone, pays the weights in capacity and
// traffic, and the held output projection / FFN queue where the ping-pong needs them.
#include "bench/layer_scope.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/baselines/harness.h"
#include "core/error.h"
#include "core/phase_names.h"
#include "hybrid/register.h"

namespace hb::bench {
namespace {

constexpr const char* kModel = "qwen2.5-0.5b";  // 14 q heads, 2 KV heads, d = 64

std::unique_ptr<LayerScope> wrap(test::Harness& h, const std::string& name, int microbatches) {
  register_hybrid(StrategyRegistry::instance());
  return std::make_unique<LayerScope>([&h, name] { return h.make(name); },
                                      find_model_preset(kModel), microbatches);
}

TEST(LayerScope, MicroBatchesDefaultToTwoFromBatchTwoAndNeverExceedTheBatch) {
  EXPECT_EQ(resolve_microbatches(0, 1), 1);
  EXPECT_EQ(resolve_microbatches(0, 2), 2);
  EXPECT_EQ(resolve_microbatches(0, 64), 2);
  EXPECT_EQ(resolve_microbatches(4, 3), 3);
  EXPECT_EQ(resolve_microbatches(1, 8), 1);
  // Where they do not pay, the default is one; an explicit count still holds.
  EXPECT_EQ(resolve_microbatches(0, 4, false), 1);
  EXPECT_EQ(resolve_microbatches(2, 4, false), 2);
}

// Micro-batches pay only where CPU work runs beside the accelerator (the ping-pong hides it
// behind the other micro-batch's O/FFN); an accelerator-only strategy would read its layer's
// weights once per micro-batch for nothing.
TEST(LayerScope, OnlyStrategiesWhoseCpuWorkOverlapsTheAcceleratorAreMicroBatched) {
  for (const auto& [name, cut] : std::vector<std::pair<std::string, std::string>>{
           {"full-gpu", "1"}, {"quest", "1"}, {"offload", "1"}, {"hybridgen", "2"}}) {
    SCOPED_TRACE(name);
    test::Harness h(kModel, 300, 4, 3, WorkloadSpec::Kind::llama_like);
    auto s = wrap(h, name, 0);
    const PlanResult r = s->plan(h.problem, h.platform);
    ASSERT_EQ(r.status, PlanStatus::ok) << r.reason;
    EXPECT_EQ(r.parameters.at("microbatches"), cut);
  }
  EXPECT_FALSE(gains_from_microbatches(OverlapStructure::serial()));
  EXPECT_FALSE(gains_from_microbatches({}));
}

// Every strategy, batch 3 in two micro-batches (2 + 1 sequences): its output is exact over
// the tokens it says it attended, for every sequence, as in attention scope.
TEST(LayerScope, EveryStrategyAttendsAsAloneAcrossMicroBatches) {
  for (const char* name : {"full-gpu", "cpu-only", "offload", "h2o", "streamingllm", "quest",
                           "infinigen", "hybridgen"}) {
    SCOPED_TRACE(name);
    test::Harness h(kModel, 300, 3, 3, WorkloadSpec::Kind::llama_like);
    auto s = wrap(h, name, 2);
    const int64_t before = h.acc->bytes_in_use();
    const PlanResult r = s->plan(h.problem, h.platform);
    ASSERT_EQ(r.status, PlanStatus::ok) << name << ": " << r.reason;
    EXPECT_EQ(r.parameters.at("scope"), "layer");
    EXPECT_EQ(r.parameters.at("microbatches"), "2");
    const int64_t weights = std::stoll(r.parameters.at("layer_weight_bytes"));
    EXPECT_EQ(weights, layer_weight_bytes(find_model_preset(kModel)));
    // Planning takes the layer's memory and nothing else; the runner's allowance covers it.
    const int64_t layer = h.acc->bytes_in_use() - before;
    EXPECT_GE(layer, weights) << "weights live in accelerator memory";
    EXPECT_LE(layer, layer_work_bytes(find_model_preset(kModel), 2));
    s->load();
    for (int step = 0; step < 3; ++step) {
      s->prepare_step(step);
      StepResult out;
      s->step(step, out);
      s->fill_attended(step, out);
      ASSERT_EQ(out.o.size(), size_t{3} * 14 * 64) << name;
      if (!out.attended.empty()) {
        ASSERT_EQ(out.attended.size(), size_t{3} * 14) << name;
      }
      EXPECT_LT(h.max_error_vs_attended(step, out), 2e-4) << name << " step " << step;
      // Two micro-batches each read every weight once.
      EXPECT_GE(out.traffic.bytes_read[int(Processor::accelerator)][int(MemoryKind::accelerator)],
                2 * weights)
          << name;
      EXPECT_GE(out.traffic.accelerator_flops, layer_dims(find_model_preset(kModel)).flops(3));
      EXPECT_TRUE(out.phase_ns.count(phase::kLayerTail)) << name;
    }
  }
}

TEST(LayerScope, WeightsThatDoNotFitAreAnOutOfMemoryPoint) {
  // qwen2.5-0.5b's layer is ~30 MB of fp16 weights; 16 MiB holds none of it.
  test::Harness h(kModel, 64, 2, 1, WorkloadSpec::Kind::llama_like, 16 << 20);
  auto s = wrap(h, "full-gpu", 0);
  EXPECT_THROW(s->plan(h.problem, h.platform), CapacityError);
}

// A recording accelerator: which operations reach the real queue, in order.
class Recorder final : public Accelerator {
 public:
  std::vector<std::string> log;
  int64_t busy = 7;
  AcceleratorInfo info_{AcceleratorKind::cpu, "recorder", true, 1000, 0, -1, ""};
  const AcceleratorInfo& info() const override { return info_; }
  std::shared_ptr<BufferAllocator> memory() override { return nullptr; }
  int64_t bytes_in_use() const override { return 100; }
  std::shared_ptr<BufferAllocator> staging_memory(int) override { return nullptr; }
  void copy_to_device(void*, const void*, size_t) override { log.push_back("h2d"); }
  void copy_to_host(void*, const void*, size_t) override { log.push_back("d2h"); }
  void decode_attention(const DecodeAttentionArgs*, int) override { log.push_back("attend"); }
  void score_logits(const float*, int, const PagedKvView&, int64_t, int64_t, float, float*,
                    int64_t) override {
    log.push_back("score");
  }
  void logit_merge_attention(const LogitMergeArgs&) override { log.push_back("merge"); }
  void merge_partials(int, const float* const*, const float* const*, int, int, float*,
                      float*) override {
    log.push_back("merge");
  }
  int64_t synchronize() override {
    log.push_back("sync");
    return busy;
  }
};

TEST(AcceleratorShare, HeldLayerWorkQueuesAfterTheQueryDownloadAndBeforeAttention) {
  Recorder real;
  auto carry = std::make_shared<BusyCarry>();
  AcceleratorShare share(real, 550, carry);
  EXPECT_EQ(share.info().capacity_bytes, 550);
  share.defer([&] { real.log.push_back("ffn"); });
  share.copy_to_host(nullptr, nullptr, 0);  // q down: ahead of the held work
  carry->ns = 5;                            // the wrapper's last synchronize
  EXPECT_EQ(share.synchronize(), 7 + 5) << "the strategy sees the layer's busy time too";
  EXPECT_EQ(carry->ns, 0);
  share.decode_attention(nullptr, 0);
  EXPECT_EQ(real.log, (std::vector<std::string>{"d2h", "sync", "ffn", "attend"}));

  real.log.clear();
  share.defer([&] { real.log.push_back("ffn"); });
  share.score_logits(nullptr, 0, PagedKvView{}, 0, 0, 1, nullptr, 0);  // compute: flush first
  share.flush();                                                       // nothing left
  EXPECT_EQ(real.log, (std::vector<std::string>{"ffn", "score"}));
}

}  // namespace
}  // namespace hb::bench
