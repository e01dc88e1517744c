// The cpu accelerator's layer GEMMs: queued and timed in measured runs; with run_layer_gemms off
// (model mode, which prices them from their traffic) queued as nothing, the same weights
// charged and the same weight bytes reported.
#include <gtest/gtest.h>

#include "core/model_presets.h"
#include "core/thread_pool.h"
#include "kernels/cpu/cpu_accelerator.h"
#include "kernels/cpu/cpu_layer_work.h"

namespace hb {
namespace {

int64_t layer_busy_ns(bool run_gemms, int64_t* weight_bytes, int64_t* in_use) {
  auto acc = cpu::make_cpu_accelerator(int64_t{1} << 30, 1, run_gemms);
  auto layer = acc->make_layer_work(find_model_preset("qwen2.5-0.5b"), 2, 0);
  *weight_bytes = layer->weight_bytes();
  *in_use = acc->bytes_in_use();
  acc->synchronize();
  for (int rep = 0; rep < 3; ++rep) {
    layer->enqueue_qkv(2);
    layer->enqueue_out_proj(2);
    layer->enqueue_ffn(2);
  }
  return acc->synchronize();
}

TEST(CpuLayerWork, RunLayerGemmsOffQueuesNothingButKeepsTheWeights) {
  int64_t w_on = 0, w_off = 0, used_on = 0, used_off = 0;
  const int64_t on = layer_busy_ns(true, &w_on, &used_on);
  const int64_t off = layer_busy_ns(false, &w_off, &used_off);
  EXPECT_GT(w_on, 0);
  EXPECT_EQ(w_off, w_on);        // the traffic counts the same weights
  EXPECT_EQ(used_off, used_on);  // and the budget holds them
  EXPECT_GE(used_on, w_on);
  EXPECT_GT(on, 0);  // three layers of GEMVs over ~0.1 GB of weights took time
  EXPECT_EQ(off, 0);
}

// Counts what a layer work allocates in its memory (the rest it charges).
class CountingMemory final : public BufferAllocator {
 public:
  Buffer allocate(size_t bytes) override {
    allocated += bytes;
    return host_->allocate(bytes);
  }
  MemoryLocation location() const override { return host_->location(); }
  size_t allocated = 0;

 private:
  std::shared_ptr<BufferAllocator> host_ = host_allocator();
};

TEST(CpuLayerWork, GemmsThatNeverRunChargeTheirWeightsWithoutAllocatingThem) {
  // Model mode: a 70B layer's 1.7 GB were allocated and filled per group for nothing.
  const ModelPreset& model = find_model_preset("qwen2.5-0.5b");
  ThreadPool pool(1);
  auto run_now = [](std::function<void()> fn) { fn(); };
  for (bool compute : {true, false}) {
    CountingMemory memory;
    size_t charged = 0;
    cpu::LayerCharge charge = [&](size_t bytes) {
      charged += bytes;
      return Buffer();
    };
    auto layer = cpu::make_cpu_layer_work(run_now, pool, memory, model, 2, 1, charge, compute);
    EXPECT_EQ(charged, static_cast<size_t>(layer->weight_bytes())) << compute;
    // Only the activations (a few rows of floats) are allocated, whether or not the GEMMs run.
    EXPECT_LT(memory.allocated, charged / 100) << compute;
    layer->enqueue_qkv(2);  // unbacked weights are never read: queued as nothing
    layer->enqueue_ffn(2);
  }
  CountingMemory memory;
  EXPECT_THROW(cpu::make_cpu_layer_work(run_now, pool, memory, model, 2, 1, {}, false), Error);
}

}  // namespace
}  // namespace hb
