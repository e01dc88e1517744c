#pragma once
// run --layers N: what the stacks add to a sweep group's memory, refused before anything runs
// (hb::Error, exit 2, naming the fix). Side by side, every strategy's one-layer point and its
// N-layer stack are resident at once: (1 + N) instances per strategy, each with its own KV cache,
// its layer's weights and activations (layer scope) and, on the emulated accelerator, its
// accelerator memory, which is host memory there; plus the fp32 workloads of the N layers.
#include <cstdint>
#include <map>
#include <string>

#include "core/accelerator.h"
#include "bench/sweep_spec.h"

namespace hb::bench {

// Bytes one group of a stack run needs, estimated from above: each instance's whole KV in its
// dtype (what a host-resident strategy holds; one that keeps it on the accelerator holds at most
// that there), its accelerator share (the KV budget, at most the KV, plus the layer's bytes) and
// every layer's fp32 K and V.
struct StackMemory {
  double host_bytes = 0;         // with an emulated accelerator, its memory included
  double accelerator_bytes = 0;  // a real accelerator's (0 on the emulated one)
};
StackMemory stack_group_memory(const SweepSpec& spec, const ModelPreset& model, DType kv_dtype,
                               int64_t seq_len, int batch, size_t strategies,
                               int64_t kv_budget_bytes, bool emulated);

// Refuses a stack run (spec.layers > 1) that cannot run: a group whose host memory exceeds
// `host_budget_bytes` (0 = unchecked), or, on a real accelerator whose KV budget is the
// deployment's (no --accelerator-memory), whose accelerator memory exceeds acc.capacity_bytes.
// `budgets`: each model's KV budget (kv_budgets()).
void check_stack_memory(const SweepSpec& spec, size_t strategies, const AcceleratorInfo& acc,
                        const std::map<std::string, int64_t>& budgets, int64_t host_budget_bytes);

}  // namespace hb::bench
