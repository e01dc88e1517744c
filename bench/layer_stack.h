#pragma once
// `run --layers N`: one timed step runs N distinct decoder layers of one strategy, one after the
// other as a model's decode step does, so the whole-model shortcut "N layers take N times one
// layer's step" can be checked against a measured stack (bench/README.md, "Layer stacks").
//
// Each layer is a strategy instance of its own: its own KV cache (built from workloads of its
// own seed, layer_workload_seed), its own selection and scheduler state, its own share of the
// accelerator (the per-layer KV budget) and, in layer scope, its own weights
// (layer_weight_seed). The dependency between layers is the model's:
//   - layer scope: layer i's output projection and FFN stay on the accelerator's in-order
//     queue (LayerScope, StackPlace::waits_for_tail false) and layer i+1's QKV projection
//     queues behind them; every strategy reads its q, k, v from that queue after a synchronize,
//     so nothing of layer i+1 that needs its input runs before layer i's FFN has finished. The
//     host may meanwhile do what needs no input (a scheduler's bookkeeping), as a real decode
//     loop does. The last layer waits for its own tail.
//   - attention scope: layer i+1's attention starts once layer i's attention output is in host
//     memory (every step ends with it there); the projections between them are not timed.
// Layer 0 runs the point's own workloads, so its output is what the one-layer point scores:
// the runner scores that point, never the stack.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/strategy.h"
#include "core/workload.h"
#include "bench/accelerator_share.h"

namespace hb::bench {

// The workload seed of layer `layer` of a stack, for a sweep's --seed: layer 0's is the seed
// itself (the point's own workloads); the others' lie far from it and from the batch's offsets
// (sequence b uses seed + 7919 b), so no two layers share a sequence.
uint64_t layer_workload_seed(uint64_t seed, int layer);

class LayerStack final : public Strategy {
 public:
  // Makes layer i's strategy (in layer scope a LayerScope at StackPlace{i, i is the last}).
  using LayerFactory = std::function<std::unique_ptr<Strategy>(int layer)>;
  // `others`: the workloads of layers 1..N-1, each one per sequence of the batch (views: they
  // must outlive the stack). N = others.size() + 1.
  LayerStack(const LayerFactory& make, std::vector<std::span<const Workload>> others);
  ~LayerStack() override;

  int layers() const { return static_cast<int>(layers_.size()); }
  std::string name() const override { return layers_[0].strategy->name(); }
  // Plans every layer on 1/N of the accelerator's capacity (the per-layer budget); a layer that
  // declines declines the stack, its reason naming the layer. The parameters are layer 0's.
  PlanResult plan(const Problem& problem, const Platform& platform) override;
  void load() override;
  void prepare_step(int s) override;
  // Every layer's step in order; out.o and out.attended are layer 0's, the phases and traffic
  // every layer's summed.
  void step(int s, StepResult& out) override;
  void fill_attended(int s, StepResult& out) override;
  std::vector<MemoryRegion> memory_regions() const override;
  std::vector<std::map<std::string, double>> trajectory() const override {
    return layers_[0].strategy->trajectory();
  }
  OverlapStructure overlap() const override { return layers_[0].strategy->overlap(); }
  bool follows_timings() const override { return layers_[0].strategy->follows_timings(); }

 private:
  struct Layer {
    std::unique_ptr<AcceleratorShare> accelerator;  // declared first: outlives its strategy
    std::unique_ptr<Strategy> strategy;
    Problem problem;  // strategies keep a pointer to it: layers_ never reallocates after plan
  };
  std::vector<Layer> layers_;
  std::vector<std::span<const Workload>> others_;
  Accelerator* accelerator_ = nullptr;
  std::shared_ptr<BusyCarry> carry_ = std::make_shared<BusyCarry>();  // never fed: no held work
};

}  // namespace hb::bench
