#pragma once
// `--workload trace:FILE`: real Q/K/V captured from a model, so users can measure accuracy on
// their own model's attention. The file is safetensors (what model tooling already writes;
// bench/safetensors.h reads and validates it):
//   k, v : [tokens, kv_heads, head_dim]      q : [steps, q_heads, head_dim]
//   prompt_q (optional) : [n, q_heads, head_dim], n <= tokens - steps
//   o (optional)        : [steps, q_heads, head_dim], the traced model's own attention output of
//                         each step over the trace's whole prompt (scripts/capture-trace.py)
//   dtype F16, BF16 or F32; other tensors are ignored.
// The trace's own prompt is its first P = tokens - steps rows; query s is the query of decode
// step s. A point of prompt length S (<= P) takes k, v rows [0, S) as its prompt and row S + s
// as step s's new token, and query s attends to tokens [0, S + s + 1). prompt_q row i is the
// query of prompt position P - n + i (the last n prompt positions, as a prefill pass computes
// them); a point gets the rows whose positions lie inside its own prompt, so strategies that seed
// scores at prefill (H2O) stay causal at any S. Without prompt_q, H2O and InfiniGen say in their
// parameters what stands in and warn (Point::warnings). A point at S = P also gets `o` and
// reports every strategy's rel L2 against it (accuracy.captured_rel_l2): what the traced model
// computed, so exact strategies show they reproduce it. A trace whose `__metadata__` names a
// planted needle span (needle_token, needle_tokens) gives every point whose prompt holds the
// span a needle: its value direction per KV head is the span's mean V row less the prompt's
// mean V row (what sets the needle apart), and accuracy.needle_success_rate is scored on it as
// on synthetic needles.
//
// A sweep opens the file once (TraceFile), refuses up front what the trace cannot serve
// (shape, lengths, more decode steps than q has, NaN/Inf in any row a point will read), then
// each point converts only the rows it needs.
#include <cstdint>
#include <string>

#include "core/workload.h"
#include "bench/safetensors.h"
#include "bench/sweep_spec.h"

namespace hb::bench {

struct TraceInfo {
  int64_t tokens = 0, steps = 0;
  int64_t prompt_queries = 0;     // rows of prompt_q, 0 when absent
  bool captured_outputs = false;  // has `o`: the traced model's attention output per step
  // A needle the capture planted in the prompt (metadata needle_token, needle_tokens: its first
  // prompt row and length; scripts/capture-trace.py --needle): -1 / 0 when none.
  int64_t needle_token = -1, needle_tokens = 0;
  int q_heads = 0, kv_heads = 0, head_dim = 0;
  std::string dtype;  // of k/v in the file
  int64_t prompt_tokens() const { return tokens - steps; }
};

class TraceFile {
 public:
  explicit TraceFile(
      const std::string& path);  // opens it and validates the header; throws hb::Error
  const TraceInfo& info() const { return info_; }
  const std::string& path() const { return file_.path(); }
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
  // The planted needle (TraceInfo::needle_token) when the point's prompt holds its span.
  void plant_needle(Workload& w, int64_t seq_len) const;
  SafetensorsFile file_;
  TraceInfo info_;
  std::string identity_;
};

TraceInfo inspect_trace(const std::string& path);  // header only; throws hb::Error
// The model a trace carries, for `run --workload trace:FILE` without --model: named
// "trace:NAME" (NAME = the file name without its directory and ".safetensors"), family "trace",
// the trace's heads, KV heads and head_dim, kv_dtype its k/v dtype (F16 fp16, BF16 bf16, F32
// fp32). It has no layer dimensions (layers = hidden = ffn = 0: a trace holds one layer's
// attention, not its weights), so its sweep times attention alone (SweepSpec::validate refuses
// --scope layer for it). Throws hb::Error for a shape the kernels cannot run (head_dim > 512).
ModelPreset trace_model_preset(const TraceFile& trace);
ModelPreset trace_model_preset(const std::string& path);  // opens it
// Makes `spec` run on `trace`'s own model (above) when `model_given` is false: spec.models
// and own_models become that model, the KV dtype the trace's unless `kv_dtype_given`, and the
// scope attention unless `scope_given` (then validate() refuses layer scope with its fix).
// Returns the note to print (what was adopted and why), "" when nothing changed (no trace, or a
// model given).
std::string adopt_trace_model(SweepSpec& spec, const TraceFile* trace, bool model_given,
                              bool kv_dtype_given, bool scope_given);
// TraceFile(path).workload(shape, seq_len, decode_steps).
Workload load_trace_workload(const std::string& path, const AttentionShape& shape, int64_t seq_len,
                             int decode_steps);

}  // namespace hb::bench
