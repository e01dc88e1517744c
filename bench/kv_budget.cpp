#include "bench/kv_budget.h"

#include <algorithm>

#include "core/dtype.h"

namespace hb::bench {

namespace {

std::string mib(int64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

}  // namespace

int64_t deployment_kv_budget(const ModelPreset& p, int64_t accelerator_memory, int batch) {
  const int64_t left =
      accelerator_memory - model_weight_bytes(p) - decode_activation_bytes(p, std::max(1, batch));
  return std::max(kMinKvBudgetBytes, left / std::max(1, p.layers));
}

int64_t crossing_kv_budget(const SweepSpec& spec, const ModelPreset& p) {
  const int64_t len =
      spec.seq_lens.empty() ? 0 : *std::min_element(spec.seq_lens.begin(), spec.seq_lens.end());
  const int batch =
      spec.batches.empty() ? 1 : *std::min_element(spec.batches.begin(), spec.batches.end());
  size_t widest = dtype_size(p.shape.kv_dtype);
  for (DType dt : spec.kv_dtypes) widest = std::max(widest, dtype_size(dt));
  const int64_t page = std::max(1, spec.page_tokens);
  const int64_t tokens = (len + std::max(0, spec.decode_steps) + page - 1) / page * page;
  const int64_t per_token =
      2LL * p.shape.kv_heads * p.shape.head_dim * static_cast<int64_t>(widest);
  // In double: 2 x 2^40 tokens x 4096 sequences x 8 KiB would overflow int64; no budget needs
  // more than an exabyte.
  const double bytes = 2.0 * static_cast<double>(tokens) * std::max(1, batch) * per_token;
  return std::max(kMinKvBudgetBytes, static_cast<int64_t>(std::min(bytes, 1e18)));
}

std::map<std::string, KvMemoryBudget> kv_budgets(const SweepSpec& spec,
                                                 const AcceleratorInfo& acc) {
  std::map<std::string, KvMemoryBudget> out;
  const int max_batch =
      spec.batches.empty() ? 1 : *std::max_element(spec.batches.begin(), spec.batches.end());
  for (const auto& m : spec.models) {
    const ModelPreset& p = spec.model(m);
    if (spec.accelerator.capacity_bytes > 0) {
      out[m] = {spec.accelerator.capacity_bytes, "--accelerator-memory"};
    } else if (!spec.deployment_kv_budget) {
      continue;
    } else if (acc.emulated) {
      out[m] = {crossing_kv_budget(spec, p),
                "emulated accelerator: twice the KV of the sweep's smallest point"};
    } else if (p.layers == 0) {
      // A trace's own model has no layer count and no weights to subtract: the accelerator's
      // own default budget (cuda: free memory less 10%) stands.
      continue;
    } else {
      const int64_t b = deployment_kv_budget(p, acc.capacity_bytes, max_batch);
      out[m] = {b, "deployment: (" + mib(acc.capacity_bytes) + " accelerator memory - " +
                       mib(model_weight_bytes(p)) + " weights - " +
                       std::to_string(decode_activation_bytes(p, max_batch) >> 10) +
                       " KiB activations) / " + std::to_string(p.layers) + " layers"};
    }
  }
  return out;
}

double kv_fit_fraction(int64_t budget_bytes, const AttentionShape& shape, int64_t seq_len,
                       int batch, int decode_steps) {
  const double tokens =
      static_cast<double>(std::max<int64_t>(1, seq_len + decode_steps)) * std::max(1, batch);
  const double fits = static_cast<double>(std::max<int64_t>(0, budget_bytes)) /
                      static_cast<double>(shape.kv_bytes_per_token());
  return std::clamp(fits / tokens, 0.0, 1.0);
}

LargestKv largest_point_kv(const SweepSpec& spec) {
  LargestKv out;
  const int64_t pt = std::max(1, spec.page_tokens);
  for (const auto& m : spec.models)
    for (DType dt : spec.kv_dtypes)
      for (int64_t len : spec.seq_lens)
        for (int b : spec.batches) {
          AttentionShape shape = spec.model(m).shape;
          shape.kv_dtype = dt;
          const int64_t tokens = (len + spec.decode_steps + pt - 1) / pt * pt;
          const int64_t bytes = tokens * b * shape.kv_bytes_per_token();
          if (bytes > out.bytes)
            out = {bytes, m + ", " + std::to_string(len) + " tokens, batch " + std::to_string(b) +
                              ", " + std::string(dtype_name(dt))};
        }
  return out;
}

}  // namespace hb::bench
