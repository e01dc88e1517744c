#pragma once
// Synthetic decode workloads: prompt KV plus a sequence of decode steps (each brings the new
// token's k, v and its query). The structured generator imitates what real models' attention
// looks like, because random Q/K/V make every selection strategy look equally bad.
//
// Construction (per KV head, in "logit units": with q = sqrt(d) * q~, a logit is q~ . k):
// orthonormal directions are drawn for a sink feature, `heavy_directions` heavy-hitter
// features, a needle feature and 2*`recency_frequencies` positional features; the rest of
// the space carries noise. Keys and queries get coefficients on these directions so that
// each knob below produces its logit contribution exactly (plus noise).
#include <cstdint>
#include <string>
#include <vector>

#include "core/kv_cache.h"
#include "core/shape.h"

namespace hb {

struct WorkloadSpec {
  // Families. `structured` is the original generator, named `diffuse` on the command line (kept
  // as a stress case: its sink share and locality fade with length, see core/README.md);
  // `uniform` is it with every structure off; `needle` is it with a planted needle (the same as
  // structured + needle = true). `llama_like` is calibrated to published measurements of real
  // models and `retrieval` (command-line family `needle`) is llama_like plus a needle span that
  // draws a set share of the decode queries' attention.
  enum class Kind { structured, uniform, needle, llama_like, retrieval };
  Kind kind = Kind::structured;
  uint64_t seed = 42;

  // Attention sinks: the first tokens score high for every query (StreamingLLM's observation
  // that models park probability mass on the first tokens). diffuse: a fixed logit; llama_like:
  // the share of each head's mass (mean over heads), whatever the context length.
  int sink_tokens = 4;
  float sink_logit = 6.0f;
  float sink_mass = 0.3f;
  // Recency (diffuse): positional features whose dot product peaks at age 0 and decays over
  // about `recency_scale` tokens, then oscillates around zero (it does not keep decaying).
  int recency_frequencies = 8;
  float recency_logit = 4.0f;
  float recency_scale = 64.0f;
  // Locality (llama_like): RoPE-style features at geometrically spaced frequencies, so the
  // logit falls like -decay * ln(distance) beyond `local_window` tokens: attention weight decays
  // like distance^-decay at every scale up to ~1M tokens.
  float decay = 1.0f;
  float local_window = 16.0f;
  int local_frequencies = 16;
  // Heavy hitters (diffuse): a sparse set of tokens (e.g. delimiters, salient entities) that many
  // queries keep attending to (H2O's observation); `heavy_fraction` of the context, placed
  // independently.
  float heavy_fraction = 0.02f;
  float heavy_logit = 4.0f;
  int heavy_directions = 2;
  // Salient tokens (llama_like): `salient_fraction` of the context in runs of `cluster_tokens`
  // on average (real salient tokens are phrases, not isolated tokens: Quest's page locality),
  // each run on one of `topics` directions that each query head weights differently and that
  // drift step to step (Quest: criticality depends on the query).
  float salient_fraction = 0.03f;
  float cluster_tokens = 8.0f;
  float salient_logit = 5.0f;
  int topics = 4;
  // Noise: the logit standard deviation of everything else.
  float noise_logit = 1.0f;
  // Query drift: each decode step's query moves by this relative amount from the previous
  // step's (real decode queries are correlated step to step, not i.i.d.).
  float query_drift = 0.1f;
  // Values: a shared mean direction of this norm relative to the per-token noise (0 = i.i.d.
  // zero-mean values, the diffuse generator's).
  float value_mean = 0.0f;
  // Needle: a key the query matches strongly at `needle_position` (fraction of the prompt,
  // 0.5 = middle) with a distinctive value, as in needle-in-a-haystack retrieval tests.
  // diffuse: one token at a fixed logit; retrieval: `needle_tokens` tokens holding
  // `needle_mass` of the first decode query's attention.
  bool needle = false;
  float needle_position = 0.5f;
  float needle_logit = 12.0f;
  float needle_value_scale = 4.0f;
  int needle_tokens = 1;
  float needle_mass = 0.5f;
  // Prompt queries provided for strategies that seed scores at prefill (H2O): the queries of
  // the last `prompt_queries` prompt positions.
  int prompt_queries = 32;

  // The defaults of a family (WorkloadSpec{} is diffuse's, the original generator).
  static WorkloadSpec defaults(Kind kind);
  // Command-line family name: "diffuse", "uniform", "llama-like", "needle" (Kind::needle is
  // "diffuse" with needle=1).
  std::string name() const;
  // The family and every knob that differs from its defaults, in the syntax
  // parse_workload_spec reads ("llama-like:sink_mass=0.4,drift=0.2"): the report's label.
  std::string label() const;
};

// `FAMILY[:KNOB=VALUE,...]` (see workload_help()). An unknown family or knob, a repeated knob,
// or a value that is not a finite number in the knob's range is an hb::Error (exit 2) naming
// the knob and its range. `structured` is accepted as an old name of `diffuse`.
WorkloadSpec parse_workload_spec(const std::string& text);
// The family of a spec (the knobs checked too); kept for callers that only need the kind.
WorkloadSpec::Kind parse_workload_kind(const std::string& s);  // throws hb::Error
// Every family and knob with its default and range, for `run --help`.
std::string workload_help();

// One decode step: the new token's k, v [kv_heads][head_dim] (appended before attention)
// and the query [q_heads][head_dim] of that token.
struct DecodeStep {
  std::vector<float> k, v, q;
  // [q_heads][head_dim], optional: the attention output the traced model itself computed for
  // this step (a trace's `o`, bench/trace.h); empty for synthetic workloads.
  std::vector<float> captured_o;
};

struct Workload {
  AttentionShape shape;
  WorkloadSpec spec;
  DenseKv prompt;  // [prompt_len][kv_heads][head_dim]
  std::vector<DecodeStep> steps;
  std::vector<float> prompt_queries;  // [n][q_heads][head_dim], positions prompt_len-n..
  int64_t needle_token = -1;          // first position of the planted needle, -1 if none
  int64_t needle_tokens = 0;          // tokens of the needle span from needle_token on
  std::vector<float> needle_value;    // [kv_heads][head_dim] distinctive value direction (unit)
  // A (sequence, query head) is a needle trial only where the exact attention gives the span at
  // least this share of its mass (when the reference has probabilities): a traced model's heads
  // mostly look elsewhere, and a head that ignores the needle says nothing of its retrieval.
  double needle_min_mass = 0;
  std::string source;  // "synthetic:<spec>" or "trace:<file>"

  int64_t prompt_len() const { return prompt.tokens; }
  int64_t num_prompt_queries() const;
  // Step s, checked: hb::Error (never a read past the workload, e.g. a trace shorter than
  // --decode-steps) when s is not one of its steps or the step's q, k, v are not the shape's sizes.
  const DecodeStep& step(int64_t s) const;
};

// Values of K and V are rounded through shape.kv_dtype, so the fp64 reference sees exactly
// what the cache stores and accuracy figures measure the strategy, not the storage type.
Workload make_workload(const AttentionShape& shape, int64_t prompt_len, int decode_steps,
                       const WorkloadSpec& spec);

}  // namespace hb
