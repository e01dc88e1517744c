#pragma once
// How far a platform's memory carries each strategy (issue 34 item 3): the longest context at a
// batch, and the largest batch at a context, whose KV fits the accelerator and the host tiers
// with placement as the strategy does it. Nothing is re-derived here: each candidate size is
// put to the strategy's own plan() (core/strategy.h) on one layer's share of the memory, the
// same call a sweep makes, so the answer is exactly where its plan turns oom. Rules per
// strategy, and why one layer's share stands for the whole model: model/README.md, "Capacity".
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/sweep_spec.h"
#include "core/accelerator.h"
#include "core/model_presets.h"
#include "core/strategy.h"
#include "model/platform_model.h"
#include "reports/capacity.h"

namespace hb::model {

// The memory one deployment of a model gives its KV, whole-model figures. Every layer holds the
// same share of it (each layer's KV and plan are alike), so a strategy fits the whole model
// exactly when it fits one layer with 1/layers of every tier.
struct KvMemory {
  std::string platform;  // the label of its points (reports/capacity.h: CapacityRow::platform)
  // The accelerator's bytes for KV over all layers (after the weights), and why: 0 when the
  // model's weights do not fit, which `weights_note` then says.
  int64_t accelerator_kv_bytes = 0;
  std::string weights_note;
  // Host tiers as the sweep gives them (free_bytes = what the tier holds for KV, whole model;
  // -1 unknown, which no plan can run out of).
  std::vector<HostTier> host_tiers;
};

// A profile's memory for `model`: HBM x usable share - the weights (the layers', as
// kv_budget_per_layer counts them, and the LM head and embedding table; without its 1 MiB
// floor: a model whose weights do not fit has no room at all), and the profile's tiers at
// their capacities (host_tiers_for).
KvMemory kv_memory(const PlatformModel& m, const ModelPreset& model);

// A measured machine's memory for `model`: the per-layer KV budget its sweep gave the
// accelerator (bench::kv_budgets: the deployment rule, --accelerator-memory, or the emulated
// accelerator's crossing budget) for every layer, and the host tiers as memtier found them
// (free_bytes: what is available now).
KvMemory kv_memory(const std::string& platform, int64_t kv_budget_per_layer,
                   std::vector<HostTier> host_tiers, const ModelPreset& model);

// Plans strategies at chosen sizes against one KvMemory. Search bounds: contexts up to
// kMaxContextSearched tokens, or the model's max_position_embeddings where it has one (a
// context that reaches it is bound by "model"), batches up to bench::kMaxBatch; a strategy that
// still fits at kMaxContextSearched is reported unbounded at the bound (a fixed --kv-budget with
// h2o or streamingllm evicts everything else, so nothing grows).
class CapacityPlanner {
 public:
  static constexpr int64_t kMaxContextSearched = int64_t{1} << 30;

  // `model` as the sweep names it (spec.model() finds the preset; rows carry the name).
  CapacityPlanner(const bench::SweepSpec& spec, const std::string& model, DType kv_dtype,
                  KvMemory memory);
  ~CapacityPlanner();

  // Whether the strategy's plan is ok at `context` tokens per sequence (the prompt and one
  // decode step) for `batch` sequences; reason: the plan's, when not.
  struct Fit {
    bool ok = false;
    std::string reason;
  };
  Fit fits(const std::string& strategy, int64_t context, int batch,
           const std::optional<bench::KvBudget>& kv_budget);

  // The longest context at `batch` (kind max_context) and the largest batch at `context` (kind
  // max_batch); `limit` names the binding memory and the plan's reason one step beyond.
  reports::CapacityRow max_context(const std::string& strategy, int batch,
                                   const std::optional<bench::KvBudget>& kv_budget);
  reports::CapacityRow max_batch(const std::string& strategy, int64_t context,
                                 const std::optional<bench::KvBudget>& kv_budget);

 private:
  struct Memory;  // one layer's share: an accelerator of that capacity and the tiers
  Fit fits_on(Memory& mem, const std::string& strategy, int64_t context, int batch,
              const std::optional<bench::KvBudget>& kv_budget);
  std::string binding(const std::string& strategy, int64_t context, int batch,
                      const std::optional<bench::KvBudget>& kv_budget, const std::string& reason);
  reports::CapacityRow row(const std::string& strategy,
                           const std::optional<bench::KvBudget>& kv_budget) const;

  const bench::SweepSpec& spec_;
  std::string model_label_;
  ModelPreset model_;
  AttentionShape shape_;
  KvMemory memory_;
  std::unique_ptr<Memory> layer_;
};

// Every (model, dtype, strategy, budget) of the sweep on one platform's memory (memory_of gives
// it per model, by the sweep's name and its preset: the weights differ): max_context at each batch
// and max_batch at each length. Models without layers (a trace) have no rows.
std::vector<reports::CapacityRow> sweep_capacity(
    const bench::SweepSpec& spec,
    const std::function<KvMemory(const std::string&, const ModelPreset&)>& memory_of);

// The machine a measured sweep ran on (platform ""): its accelerator's per-model budget as
// the sweep chose it and `host_tiers` (the sweep's; empty: none known, no rows).
std::vector<reports::CapacityRow> machine_capacity(const bench::SweepSpec& spec,
                                                   const AcceleratorInfo& accelerator,
                                                   const std::vector<HostTier>& host_tiers);

}  // namespace hb::model
