#pragma once
// `run --scope layer`: one timed step is one decoder layer's decode for the batch, not just its
// attention. Any strategy is wrapped the same way, so comparisons stay fair:
//
//   for each micro-batch m:   QKV(m) -> strategy's attention(m) -> O(m) -> FFN(m)
//
// with the accelerator running the layer's GEMMs (core/layer_work.h) on its in-order queue.
// Overlap comes only where a real layer's dependencies allow it: inside attention, whatever the
// strategy overlaps itself (HybridGen's CPU part beside the accelerator's part); across
// micro-batches, micro-batch m+1's CPU-side attention beside the accelerator's O and FFN of
// micro-batch m (accelerator_share.h holds them back until m+1's q is on its way down). The
// weights and activations count against the accelerator's capacity, ahead of any KV.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/layer_work.h"
#include "core/strategy.h"
#include "bench/accelerator_share.h"

namespace hb::bench {

// Whether cutting a batch in micro-batches pays for reading the layer's weights once more per
// micro-batch: only a strategy whose CPU work runs beside the accelerator (a stage of its overlap
// structure holds both) has work that one micro-batch's O/FFN can hide; one that attends on the
// accelerator alone (full-gpu, quest, ...) would only read its weights twice.
bool gains_from_microbatches(const OverlapStructure& overlap);
// Micro-batches a batch is cut into: `requested` (clamped to the batch), or with 0 the default,
// 2 from batch 2 on where they pay (`gains`), else 1.
int resolve_microbatches(int requested, int batch, bool gains = true);

// Where a LayerScope sits in a stack of decoder layers (run --layers, bench/layer_stack.h): its
// index in the model (its weights' values, layer_weight_seed) and whether its step waits for its
// own output projection and FFN. A layer on its own, and the last of a stack, waits; the others
// leave them on the accelerator's in-order queue, where the next layer's QKV projection (the
// first thing its step queues) follows them: the FFN's output is that projection's input.
struct StackPlace {
  int layer = 0;
  bool waits_for_tail = true;
};

class LayerScope final : public Strategy {
 public:
  using Factory = std::function<std::unique_ptr<Strategy>()>;
  // `microbatches` as given on the command line (0 = default).
  LayerScope(Factory make, const ModelPreset& model, int microbatches, StackPlace place = {});
  ~LayerScope() override;

  std::string name() const override { return parts_[0].strategy->name(); }
  PlanResult plan(const Problem& problem, const Platform& platform) override;
  void load() override;
  void prepare_step(int s) override;
  void step(int s, StepResult& out) override;
  void fill_attended(int s, StepResult& out) override;
  std::vector<MemoryRegion> memory_regions() const override;
  std::vector<std::map<std::string, double>> trajectory() const override;
  OverlapStructure overlap() const override { return parts_[0].strategy->overlap(); }
  bool follows_timings() const override { return parts_[0].strategy->follows_timings(); }

 private:
  struct Part {  // one micro-batch: its own strategy instance over its sequences
    std::unique_ptr<Strategy> strategy;
    std::unique_ptr<AcceleratorShare> accelerator;
    Problem problem;
    int first = 0;                               // index of its first sequence in the batch
    std::vector<std::vector<int64_t>> attended;  // its last step's, empty = dense (2+ parts)
  };
  void add_layer_traffic(StepResult& out) const;
  // out.attended from the parts': empty when every part attended densely, else one list per
  // (sequence, query head), a dense part's lists spelled out (micro-batches can differ: each
  // has its own controller).
  void assemble_attended(int s, StepResult& out) const;

  Factory make_;
  ModelPreset model_;
  int requested_microbatches_;
  StackPlace place_;
  std::vector<Part> parts_;
  Accelerator* accelerator_ = nullptr;
  std::unique_ptr<LayerWork> layer_;
  std::shared_ptr<BusyCarry> carry_ = std::make_shared<BusyCarry>();
  int64_t out_per_sequence_ = 0;  // floats of output per sequence
};

}  // namespace hb::bench
