// Layer stacks (bench/layer_stack.h, run --layers N): N distinct layers, each with its own KV,
// weights and accelerator share; layer i+1 never starts on its input before layer i's FFN has
// finished (the accelerator's queue order and its execution timestamps say so); layer 0 is the
// point's own layer, bit for bit.
#include "bench/layer_stack.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <vector>

#include "tests/baselines/harness.h"
#include "tests/forwarding_accelerator.h"
#include "core/timer.h"
#include "hybrid/register.h"
#include "bench/layer_scope.h"

namespace hb::bench {
namespace {

constexpr const char* kModel = "qwen2.5-0.5b";  // 24 layers, 14 q heads, 2 KV heads, d = 64
constexpr int kLayers = 4;

// The workloads of layers 1..N-1 for a harness's problem (what the runner makes per unit).
struct OtherLayers {
  std::vector<std::vector<Workload>> ws;
  std::vector<std::span<const Workload>> views;
  OtherLayers(const test::Harness& h, int64_t prompt, int steps) {
    WorkloadSpec spec;
    spec.kind = WorkloadSpec::Kind::llama_like;
    for (int layer = 1; layer < kLayers; ++layer) {
      std::vector<Workload> batch;
      for (int b = 0; b < h.problem.batch; ++b) {
        spec.seed = layer_workload_seed(42, layer) + 7919 * static_cast<uint64_t>(b);
        batch.push_back(make_workload(h.shape, prompt, steps, spec));
      }
      ws.push_back(std::move(batch));
    }
    for (const auto& w : ws) views.emplace_back(w);
  }
};

// A stack of kLayers `name` layers: layer scope (LayerScope per layer, only the last waiting for
// its own tail) or attention scope.
std::unique_ptr<LayerStack> stack_of(test::Harness& h, const std::string& name, bool layer_scope,
                                     const OtherLayers& others) {
  return std::make_unique<LayerStack>(
      [&h, name, layer_scope](int layer) -> std::unique_ptr<Strategy> {
        if (!layer_scope) return h.make(name);
        return std::make_unique<LayerScope>([&h, name] { return h.make(name); },
                                            find_model_preset(kModel), 0,
                                            StackPlace{layer, layer == kLayers - 1});
      },
      others.views);
}

TEST(LayerStack, SeedsKeepLayersApart) {
  EXPECT_EQ(layer_workload_seed(42, 0), 42u) << "layer 0 runs the point's own workloads";
  EXPECT_EQ(layer_weight_seed(0), 1u) << "layer 0's weights are a lone layer's";
  for (int a = 0; a < 64; ++a)
    for (int b = a + 1; b < 64; ++b) {
      // Each layer's matrices take seeds from its seed up to +15: no two layers share one.
      EXPECT_GE(layer_weight_seed(b) - layer_weight_seed(a), 16u);
      // No layer's sequence b' = 0..4095 (seed + 7919 b') lands on another layer's.
      const uint64_t d = layer_workload_seed(42, b) - layer_workload_seed(42, a);
      EXPECT_TRUE(d > 7919ull * 4096 && -d > 7919ull * 4096) << a << " " << b;
    }
}

// Every layer holds its own KV cache (disjoint memory, built from its own workload) and its own
// weights (the accelerator holds N layers' of them), each layer within its own budget.
TEST(LayerStack, DistinctLayersHaveDistinctKvAndWeights) {
  const ModelPreset& model = find_model_preset(kModel);
  for (const char* name : {"cpu-only", "full-gpu", "hybridgen"}) {
    SCOPED_TRACE(name);
    test::Harness h(kModel, 300, 3, 2, WorkloadSpec::Kind::llama_like,
                    kLayers * (layer_work_bytes(model, 1) + (int64_t{8} << 20)));
    register_hybrid(StrategyRegistry::instance());
    const OtherLayers others(h, 300, 3);
    ASSERT_NE(others.ws[0][0].prompt.k, h.ws[0].prompt.k) << "layer 1's KV is not layer 0's";
    auto s = stack_of(h, name, true, others);
    const PlanResult r = s->plan(h.problem, h.platform);
    ASSERT_EQ(r.status, PlanStatus::ok) << r.reason;
    EXPECT_EQ(r.parameters.at("layers"), "4");
    EXPECT_GE(h.acc->bytes_in_use(), kLayers * layer_weight_bytes(model))
        << "every layer allocates its own weights";
    s->load();
    std::vector<MemoryRegion> regions = s->memory_regions();
    ASSERT_FALSE(regions.empty());
    EXPECT_EQ(regions.size() % kLayers, 0u);
    std::sort(regions.begin(), regions.end(),
              [](const auto& a, const auto& b) { return a.ptr < b.ptr; });
    for (size_t i = 1; i < regions.size(); ++i)
      EXPECT_LE(static_cast<const std::byte*>(regions[i - 1].ptr) + regions[i - 1].bytes,
                static_cast<const std::byte*>(regions[i].ptr))
          << "two layers share KV memory";
    s->prepare_step(0);
    StepResult out;
    s->step(0, out);
    EXPECT_EQ(out.o.size(), size_t{2} * 14 * 64);
  }
}

// Layer 0 runs the point's own problem: its output is a lone instance's, bit for bit, and the
// stack moves N layers' traffic.
TEST(LayerStack, LayerZeroIsTheLoneLayerAndTrafficAddsUp) {
  for (const char* name : {"full-gpu", "cpu-only", "quest"}) {
    SCOPED_TRACE(name);
    test::Harness h(kModel, 400, 3, 1, WorkloadSpec::Kind::llama_like, int64_t{64} << 20);
    test::Harness lone_h(kModel, 400, 3, 1, WorkloadSpec::Kind::llama_like, int64_t{16} << 20);
    const OtherLayers others(h, 400, 3);
    auto s = stack_of(h, name, false, others);
    auto lone = lone_h.make(name);
    ASSERT_EQ(s->plan(h.problem, h.platform).status, PlanStatus::ok);
    ASSERT_EQ(lone->plan(lone_h.problem, lone_h.platform).status, PlanStatus::ok);
    s->load();
    lone->load();
    for (int step = 0; step < 3; ++step) {
      StepResult a, b;
      s->prepare_step(step);
      s->step(step, a);
      lone->prepare_step(step);
      lone->step(step, b);
      EXPECT_EQ(a.o, b.o) << "step " << step;
      EXPECT_EQ(a.traffic.h2d_bytes, kLayers * b.traffic.h2d_bytes);
      EXPECT_EQ(a.traffic.d2h_bytes, kLayers * b.traffic.d2h_bytes);
    }
  }
}

// The budget is per layer: a stack of N gets N of them, and a layer that does not fit its own
// share declines the stack, naming the layer.
TEST(LayerStack, EachLayerPlansOnItsOwnShare) {
  test::Harness h(kModel, 2000, 3, 1, WorkloadSpec::Kind::llama_like, int64_t{2} << 20);
  const OtherLayers others(h, 2000, 3);
  auto lone = h.make("full-gpu");
  ASSERT_EQ(lone->plan(h.problem, h.platform).status, PlanStatus::ok)
      << "one layer's KV (~1 MiB) fits 2 MiB";
  auto s = stack_of(h, "full-gpu", false, others);
  const PlanResult r = s->plan(h.problem, h.platform);
  EXPECT_EQ(r.status, PlanStatus::oom) << "a quarter of 2 MiB holds no layer's KV";
  EXPECT_EQ(r.reason.rfind("layer 0 of 4: ", 0), 0u) << r.reason;
}

// ---- The dependency, observed on the real cpu accelerator through a probe that forwards to it.

struct Event {
  std::string what;  // "qkv 1", "ffn 0 done", "sync", ...
  int64_t host_ns = 0;
};

// Logs what is queued (at enqueue time, in order) and, through host kernels queued right behind
// each layer's FFN and in front of each QKV projection, when the accelerator got there.
class Probe final : public test::ForwardingAccelerator {
 public:
  using ForwardingAccelerator::ForwardingAccelerator;
  std::vector<Event> queued;    // enqueue order, host time of the call
  std::vector<Event> executed;  // accelerator execution order and time (read after a sync)

  void copy_to_host(void* d, const void* s, size_t n) override {
    log("d2h");
    real_.copy_to_host(d, s, n);
  }
  void decode_attention(const DecodeAttentionArgs* a, int b) override {
    log("attend");
    real_.decode_attention(a, b);
  }
  int64_t synchronize() override {
    const int64_t busy = real_.synchronize();
    log("sync");  // after: the host's time once the queue is done
    return busy;
  }
  std::unique_ptr<LayerWork> make_layer_work(const ModelPreset& m, int b, int layer) override;

  void log(const std::string& what) { queued.push_back({what, now_ns()}); }
  void mark(const std::string& what) {
    real_.enqueue(HostKernelArgs{[this, what](ThreadPool&) {
      executed.push_back({what, now_ns()});
    }});
  }
};

class ProbeLayerWork final : public LayerWork {
 public:
  ProbeLayerWork(Probe& p, std::unique_ptr<LayerWork> real, int layer)
      : probe_(p), real_(std::move(real)), layer_(std::to_string(layer)) {}
  void enqueue_qkv(int b) override {
    probe_.log("qkv " + layer_);
    probe_.mark("qkv " + layer_ + " starts");
    real_->enqueue_qkv(b);
  }
  void enqueue_out_proj(int b) override {
    probe_.log("o " + layer_);
    real_->enqueue_out_proj(b);
  }
  void enqueue_ffn(int b) override {
    probe_.log("ffn " + layer_);
    real_->enqueue_ffn(b);
    probe_.mark("ffn " + layer_ + " done");
  }
  int64_t weight_bytes() const override { return real_->weight_bytes(); }
  int max_batch() const override { return real_->max_batch(); }

 private:
  Probe& probe_;
  std::unique_ptr<LayerWork> real_;
  std::string layer_;
};

std::unique_ptr<LayerWork> Probe::make_layer_work(const ModelPreset& m, int b, int layer) {
  log("weights " + std::to_string(layer));
  return std::make_unique<ProbeLayerWork>(*this, real_.make_layer_work(m, b, layer), layer);
}

size_t index_of(const std::vector<Event>& log, const std::string& what, size_t from = 0) {
  for (size_t i = from; i < log.size(); ++i)
    if (log[i].what == what) return i;
  ADD_FAILURE() << "no '" << what << "' in the log";
  return log.size();
}

TEST(LayerStack, NextLayerStartsOnlyAfterThePreviousLayersFfn) {
  const ModelPreset& model = find_model_preset(kModel);
  for (const char* name : {"cpu-only", "full-gpu"}) {
    SCOPED_TRACE(name);
    test::Harness h(kModel, 300, 3, 1, WorkloadSpec::Kind::llama_like,
                    kLayers * (layer_work_bytes(model, 1) + (int64_t{8} << 20)));
    Probe probe(*h.acc);
    h.platform.accelerator = &probe;
    const OtherLayers others(h, 300, 3);
    auto s = stack_of(h, name, true, others);
    ASSERT_EQ(s->plan(h.problem, h.platform).status, PlanStatus::ok);
    for (int layer = 0; layer < kLayers; ++layer)  // one set of weights per layer, its own seed
      index_of(probe.queued, "weights " + std::to_string(layer));
    s->load();
    s->prepare_step(0);
    probe.queued.clear();
    probe.executed.clear();
    StepResult out;
    s->step(0, out);
    const auto& q = probe.queued;
    for (int i = 0; i + 1 < kLayers; ++i) {
      const std::string me = std::to_string(i), next = std::to_string(i + 1);
      const size_t ffn = index_of(q, "ffn " + me), qkv = index_of(q, "qkv " + next);
      // Queue order: the next layer's QKV projection (its input) queues behind this FFN, and
      // the host does not wait for this layer's tail in between.
      ASSERT_LT(ffn, qkv);
      for (size_t k = ffn; k < qkv; ++k) EXPECT_NE(q[k].what, "sync") << "layer " << me;
      // The next layer's first read of its input (a synchronize after its QKV) returns after
      // the accelerator finished this layer's FFN.
      const size_t first_sync = index_of(q, "sync", qkv);
      const auto& ex = probe.executed;
      const size_t done = index_of(ex, "ffn " + me + " done"),
                   starts = index_of(ex, "qkv " + next + " starts");
      ASSERT_LT(done, starts) << "executed out of order";
      EXPECT_LE(ex[done].host_ns, ex[starts].host_ns);
      ASSERT_LT(first_sync, q.size());
      EXPECT_GE(q[first_sync].host_ns, ex[done].host_ns)
          << "layer " << next << " read its input before layer " << me << "'s FFN finished";
    }
    // Only the last layer waits for its own tail: the step ends on a synchronize after it.
    EXPECT_LT(index_of(q, "ffn 3"), q.size());
    EXPECT_EQ(q.back().what, "sync");
    h.platform.accelerator = h.acc.get();
  }
}

}  // namespace
}  // namespace hb::bench
