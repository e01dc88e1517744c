#pragma once
// Helpers the baseline strategies share (sizes, budgets, reporting). Policies stay in each
// strategy's file; mechanisms live in kernels/.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/step_io.h"
#include "core/strategy.h"
#include "core/vocabulary.h"
#include "kernels/cpu/attention.h"

namespace hb::baselines {

inline std::string mib(int64_t bytes) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return b;
}

// Accelerator bytes StepIO allocates (q, new k, v, o, lse of every sequence, fp32).
inline int64_t step_io_bytes(const Problem& p) {
  const auto& s = p.shape;
  return 4LL * p.batch * (2LL * s.q_heads * s.head_dim + 2LL * s.kv_heads * s.head_dim + s.q_heads);
}

inline int64_t accelerator_free(const Platform& pf) {
  return pf.accelerator->info().capacity_bytes - pf.accelerator->bytes_in_use();
}

// Bytes a strategy may fill, next to `fixed` bytes, with buffers it sizes to the budget when
// their full size does not fit (Quest's landing pages, InfiniGen's fetch buffers): what is free
// less 1/16 of it, left to the kernels' per-launch scratch (the CUDA accelerator charges their
// descriptors and split partials to the same budget).
inline int64_t fillable_bytes(const Platform& pf, int64_t fixed) {
  const int64_t free = accelerator_free(pf);
  return std::max<int64_t>(0, free - free / 16 - fixed);
}

// Sets status "oom" with a reason when `need` accelerator bytes do not fit; returns fit.
inline bool check_accelerator_fit(const Platform& pf, int64_t need, const std::string& what,
                                  const std::string& fix, PlanResult& r) {
  const int64_t cap = accelerator_free(pf);
  if (need <= cap) return true;
  r.status = PlanStatus::oom;
  r.reason = what + " needs " + mib(need) + " of accelerator memory; " + mib(cap) + " available" +
             (fix.empty() ? "" : " (" + fix + ")");
  return false;
}

// --opt NAME.offload of a strategy whose paper also describes an offloading deployment (KV in
// host memory, only what a step needs on the accelerator): auto offloads exactly when the
// all-resident plan does not fit the accelerator budget, so a long context runs as the paper
// would deploy it instead of being reported oom; 1 and 0 force one deployment.
enum class OffloadChoice { automatic, always, never };
inline constexpr Vocabulary<OffloadChoice, 3> kOffloadChoices{{"auto", "1", "0"}};

// Records where the point keeps its KV and why, so the report shows the deployment next to the
// figures it explains (strategy_params.deployment, .deployment_reason).
inline void record_deployment(PlanResult& r, bool offloaded, const std::string& why) {
  r.parameters["deployment"] = offloaded ? "offloaded" : "resident";
  r.parameters["deployment_reason"] = why;
}

// Sets status "oom" when the host tier reports less free memory than `need`.
inline bool check_host_fit(const HostTier& tier, int64_t need, PlanResult& r) {
  if (tier.free_bytes < 0 || need <= tier.free_bytes) return true;
  r.status = PlanStatus::oom;
  r.reason = "KV needs " + mib(need) + " on " + tier.location.to_string() + "; " +
             mib(tier.free_bytes) + " free";
  return false;
}

// round(ratio * n), clamped to [0, n].
inline int64_t ratio_tokens(double ratio, int64_t n) {
  return std::clamp<int64_t>(static_cast<int64_t>(std::llround(ratio * static_cast<double>(n))), 0,
                             n);
}

inline int64_t pages_for(int64_t tokens, int page_tokens) {
  return (tokens + page_tokens - 1) / page_tokens;
}

// One decode-attention argument per sequence of the batch: sequence b's query, output and LSE
// rows of `io` (its accelerator buffers, or with `host` its host mirrors) over the KV view
// kv_of(b). Callers add logits or token ranges to the result.
template <class ViewOf>
std::vector<DecodeAttentionArgs> batch_attention_args(const Problem& p, StepIO& io, ViewOf&& kv_of,
                                                      bool host = false) {
  const size_t hq = static_cast<size_t>(p.shape.q_heads), d = static_cast<size_t>(p.shape.head_dim);
  float* q = host ? io.q_host.data() : io.q_dev();
  float* o = host ? io.o_host.data() : io.o_dev();
  float* lse = host ? io.lse_host.data() : io.lse_dev();
  std::vector<DecodeAttentionArgs> args(static_cast<size_t>(p.batch));
  for (int b = 0; b < p.batch; ++b) {
    auto& a = args[static_cast<size_t>(b)];
    a.q = q + static_cast<size_t>(b) * hq * d;
    a.kv = kv_of(b);
    a.q_heads = p.shape.q_heads;
    a.o = o + static_cast<size_t>(b) * hq * d;
    a.lse = lse + static_cast<size_t>(b) * hq;
  }
  return args;
}

inline std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

}  // namespace hb::baselines
