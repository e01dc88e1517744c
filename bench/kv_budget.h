#pragma once
// How much of a layer's KV cache the accelerator may hold (its KV budget), when
// --accelerator-memory does not say: as the node serving the model would have it. A real
// accelerator's budget is what its memory leaves after every layer's weights and the decode
// step's activations, shared by the layers; the cpu accelerator's memory is emulated, so its
// budget is chosen to put the sweep's shortest point inside it and the longer ones outside
// (cli/README.md: "The accelerator's KV budget"). And, per point, how much of its KV fits.
#include <cstdint>
#include <map>
#include <string>

#include "core/accelerator.h"
#include "core/model_presets.h"
#include "bench/sweep_spec.h"

namespace hb::bench {

// The smallest budget any rule gives: the --accelerator-memory floor (1 MiB).
inline constexpr int64_t kMinKvBudgetBytes = int64_t{1} << 20;

// (accelerator_memory - model_weight_bytes - decode_activation_bytes at `batch`) / layers, at
// least kMinKvBudgetBytes (a model whose weights do not fit leaves every GPU point oom).
int64_t deployment_kv_budget(const ModelPreset& p, int64_t accelerator_memory, int batch);

// The cpu accelerator's default: twice the KV (per layer) of the sweep's smallest point for this
// model: the shortest length plus the decode steps, rounded up to whole pages, times the smallest
// batch, at the widest KV element type swept. That point fits with room for the strategies'
// buffers; a point with twice the tokens or more does not. The default sweep (llama-3.1-8b,
// 4k/16k/32k, batch 1, fp16, 24 steps) gets 2 x 4,128 x 4 KiB = 33 MiB: 4k fits, 16k and 32k
// do not (about 50% and 25% of their KV fits).
int64_t crossing_kv_budget(const SweepSpec& spec, const ModelPreset& p);

// One model's budget and the rule that chose it, for the report's context.
struct KvMemoryBudget {
  int64_t bytes = 0;
  std::string rule;  // "--accelerator-memory", "deployment: ...", "emulated: ..."
};

// Every model of the sweep: --accelerator-memory when given; else, with
// spec.deployment_kv_budget, crossing_kv_budget for an emulated accelerator and
// deployment_kv_budget (memory: `acc.capacity_bytes`, what the accelerator reports with no
// override, i.e. its free memory less 10% for CUDA) for a real one, at the sweep's largest batch;
// else nothing (the accelerator's own default applies). Keyed by the model as spec.models names it.
std::map<std::string, KvMemoryBudget> kv_budgets(const SweepSpec& spec, const AcceleratorInfo& acc);

// Share of a point's KV cache that `budget_bytes` holds: budget tokens (budget / KV bytes per
// token of one layer) over the tokens the point's cache holds at its last step (batch x
// (seq_len + decode_steps)), capped at 1. 1: all of it fits; below 1: the rest must live on
// the host (or the point is oom for strategies that keep all of it on the accelerator).
double kv_fit_fraction(int64_t budget_bytes, const AttentionShape& shape, int64_t seq_len,
                       int batch, int decode_steps);

// The point of the sweep whose KV cache (one layer's, its last step's tokens rounded up to
// whole pages, the whole batch) is the largest: what cpu-only and offload put on the host KV
// node. `what` names it ("llama-3.1-8b, 32768 tokens, batch 1, fp16"); bytes 0 for an empty
// sweep.
struct LargestKv {
  int64_t bytes = 0;
  std::string what;
};
LargestKv largest_point_kv(const SweepSpec& spec);

}  // namespace hb::bench
