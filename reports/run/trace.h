#pragma once
// `--workload trace:FILE`: real Q/K/V captured from a model, so users can measure accuracy on
// their own model's attention. The file is safetensors (what model tooling already writes):
//   k, v : [tokens, kv_heads, head_dim]      q : [steps, q_heads, head_dim]
//   dtype F16, BF16 or F32; optional "prompt_q" [n, q_heads, head_dim] for strategies that seed
//   scores at prefill (H2O).
// Query s attends to tokens [0, seq_len + s + 1): the first seq_len rows are the prompt and the
// rows after them are the decode steps' own tokens. The header is validated (size, JSON,
// dtypes, shapes, offsets inside the file, no overlap) before any data is trusted.
#include <cstdint>
#include <string>

#include "core/workload.h"

namespace hb::run {

struct TraceInfo {
  int64_t tokens = 0, steps = 0;
  int q_heads = 0, kv_heads = 0, head_dim = 0;
  std::string dtype;  // of k/v in the file
};

TraceInfo inspect_trace(const std::string& path);  // header only; throws hb::Error

// seq_len <= 0: tokens - steps. Values are rounded through shape.kv_dtype like synthetic ones.
Workload load_trace_workload(const std::string& path, const AttentionShape& shape, int64_t seq_len, int max_steps);

}  // namespace hb::run
