#pragma once
// `--workload trace:FILE`: real Q/K/V captured from a model, so users can measure accuracy on
// their own model's attention. The file is safetensors (what model tooling already writes;
// reports/run/safetensors.h reads and validates it):
//   k, v : [tokens, kv_heads, head_dim]      q : [steps, q_heads, head_dim]
//   prompt_q (optional) : [n, q_heads, head_dim], n <= tokens - steps
//   dtype F16, BF16 or F32.
// The trace's own prompt is its first P = tokens - steps rows; query s is the query of decode
// step s. A point of prompt length S (<= P) takes k, v rows [0, S) as its prompt and row S + s
// as step s's new token, and query s attends to tokens [0, S + s + 1). prompt_q row i is the
// query of prompt position P - n + i (the last n prompt positions, as a prefill pass computes
// them); a point gets the rows whose positions lie inside its own prompt, so strategies that seed
// scores at prefill (H2O) stay causal at any S.
//
// A sweep opens the file once (TraceFile), refuses up front what the trace cannot serve
// (shape, lengths, more decode steps than q has, NaN/Inf in any row a point will read), then
// each point converts only the rows it needs.
#include <cstdint>
#include <string>

#include "core/workload.h"
#include "reports/run/safetensors.h"
#include "reports/run/sweep_spec.h"

namespace hb::run {

struct TraceInfo {
  int64_t tokens = 0, steps = 0;
  int64_t prompt_queries = 0;  // rows of prompt_q, 0 when absent
  int q_heads = 0, kv_heads = 0, head_dim = 0;
  std::string dtype;  // of k/v in the file
  int64_t prompt_tokens() const { return tokens - steps; }
};

class TraceFile {
 public:
  explicit TraceFile(
      const std::string& path);  // opens it and validates the header; throws hb::Error
  const TraceInfo& info() const { return info_; }
  // "trace:NAME@HASH": the points' workload axis. NAME is the file name without its directory
  // and HASH (16 hex digits) covers the file size, the header and 16 spread 64 KiB blocks of the
  // data, so `trace:./T.safetensors`, `trace:T.safetensors` and an absolute path give the same
  // identity and a different file under the same name does not (reports/README.md).
  const std::string& identity() const { return identity_; }
  // Refuses (hb::Error, exit 2) what this trace cannot serve, before any point runs: a model of
  // another attention shape, a length that does not fit, more --decode-steps than q has, and
  // NaN/Inf in any row a point of the sweep will read (or a value its KV dtype cannot hold).
  void check_sweep(const SweepSpec& spec) const;
  // One point's workload: only the rows it needs are read and converted. seq_len <= 0 means the
  // trace's own prompt (tokens - steps). Values of k and v are rounded through shape.kv_dtype
  // like synthetic ones.
  Workload workload(const AttentionShape& shape, int64_t seq_len, int decode_steps) const;
  // prompt_q rows a point of prompt length seq_len uses (those of positions < seq_len).
  int64_t prompt_queries_for(int64_t seq_len) const;

 private:
  void check_shape(const AttentionShape& shape) const;
  void check_lengths(int64_t seq_len, int decode_steps) const;
  SafetensorsFile file_;
  TraceInfo info_;
  std::string identity_;
};

TraceInfo inspect_trace(const std::string& path);  // header only; throws hb::Error
// TraceFile(path).workload(shape, seq_len, decode_steps).
Workload load_trace_workload(const std::string& path, const AttentionShape& shape, int64_t seq_len,
                             int decode_steps);
// The workload axis of a sweep's points: the trace identity for "trace:FILE", else `workload`.
std::string workload_axis(const std::string& workload);

}  // namespace hb::run
