#include "bench/stack_memory.h"

#include <algorithm>

#include "core/dtype.h"
#include "core/error.h"
#include "core/layer_work.h"
#include "bench/layer_scope.h"

namespace hb::bench {

StackMemory stack_group_memory(const SweepSpec& spec, const ModelPreset& model, DType kv_dtype,
                               int64_t seq_len, int batch, size_t strategies,
                               int64_t kv_budget_bytes, bool emulated) {
  AttentionShape shape = model.shape;
  shape.kv_dtype = kv_dtype;
  const double tokens = static_cast<double>(seq_len + spec.decode_steps) * batch;
  const double kv = tokens * static_cast<double>(shape.kv_bytes_per_token());
  const double fp32_kv = tokens * 2.0 * shape.kv_heads * shape.head_dim * 4;
  double layer = 0;
  if (spec.scope == Scope::layer) {
    const int n = resolve_microbatches(spec.microbatches, batch);
    layer = static_cast<double>(layer_work_bytes(model, (batch + n - 1) / n));
  }
  const double share = std::min(static_cast<double>(std::max<int64_t>(kv_budget_bytes, 0)), kv);
  const double instances = static_cast<double>(strategies) * (1 + spec.layers);
  StackMemory m;
  m.host_bytes = spec.layers * fp32_kv + instances * (kv + (emulated ? share + layer : 0));
  if (!emulated) m.accelerator_bytes = instances * (kv_budget_bytes + layer);
  return m;
}

namespace {

std::string mib(double bytes) {
  return std::to_string(static_cast<int64_t>(bytes / 1048576)) + " MiB";
}

[[noreturn]] void refuse(const SweepSpec& spec, const std::string& m, int64_t n, int b,
                         size_t strategies, double need, const std::string& memory,
                         double available) {
  throw Error("--layers " + std::to_string(spec.layers) + " at sequence length " +
                  std::to_string(n) + " x batch " + std::to_string(b) + " of " + m +
                  " needs about " + mib(need) + " of " + memory + " (" +
                  std::to_string(strategies) + " strategies, each a one-layer point beside a " +
                  std::to_string(spec.layers) +
                  "-layer stack: KV, weights and workloads of every layer), more than the " +
                  mib(available) + " available",
              "run fewer strategies at once (--strategy a,b,...: the shortcut is checked per "
              "strategy, so several runs cover them all), fewer --layers, a shorter --seq-len or "
              "a smaller --batch");
}

}  // namespace

void check_stack_memory(const SweepSpec& spec, size_t strategies, const AcceleratorInfo& acc,
                        const std::map<std::string, int64_t>& budgets, int64_t host_budget_bytes) {
  if (spec.layers <= 1) return;
  // The real accelerator's own memory binds only under the deployment's budget: with
  // --accelerator-memory the user sized each instance, and one that does not fit is an oom point.
  const bool check_accelerator = !acc.emulated && spec.accelerator.capacity_bytes <= 0;
  for (const auto& m : spec.models) {
    const auto it = budgets.find(m);
    const int64_t budget = it != budgets.end() ? it->second : spec.accelerator.capacity_bytes;
    for (DType dt : spec.kv_dtypes)
      for (int64_t n : spec.seq_lens)
        for (int b : spec.batches) {
          const StackMemory need =
              stack_group_memory(spec, spec.model(m), dt, n, b, strategies, budget, acc.emulated);
          if (host_budget_bytes > 0 && need.host_bytes > static_cast<double>(host_budget_bytes))
            refuse(spec, m, n, b, strategies, need.host_bytes, "host memory",
                   static_cast<double>(host_budget_bytes));
          if (check_accelerator && need.accelerator_bytes > static_cast<double>(acc.capacity_bytes))
            refuse(spec, m, n, b, strategies, need.accelerator_bytes, "accelerator memory",
                   static_cast<double>(acc.capacity_bytes));
        }
  }
}

}  // namespace hb::bench
