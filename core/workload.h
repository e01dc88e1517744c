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
  enum class Kind { structured, uniform, needle };
  Kind kind = Kind::structured;
  uint64_t seed = 42;

  // Attention sinks: the first tokens score high for every query (StreamingLLM's observation
  // that models park probability mass on the first tokens).
  int sink_tokens = 4;
  float sink_logit = 6.0f;
  // Recency: positional features whose dot product peaks at age 0 and decays over about
  // `recency_scale` tokens (RoPE's long-range decay makes recent tokens likelier targets).
  int recency_frequencies = 8;
  float recency_logit = 4.0f;
  float recency_scale = 64.0f;
  // Heavy hitters: a sparse set of tokens (e.g. delimiters, salient entities) that many
  // queries keep attending to (H2O's observation); `heavy_fraction` of the context.
  float heavy_fraction = 0.02f;
  float heavy_logit = 4.0f;
  int heavy_directions = 2;
  // Noise: the logit standard deviation of everything else.
  float noise_logit = 1.0f;
  // Query drift: each decode step's query moves by this relative amount from the previous
  // step's (real decode queries are correlated step to step, not i.i.d.).
  float query_drift = 0.1f;
  // Needle: a key the query matches strongly at `needle_position` (fraction of the prompt,
  // 0.5 = middle) with a distinctive value, as in needle-in-a-haystack retrieval tests.
  bool needle = false;
  float needle_position = 0.5f;
  float needle_logit = 12.0f;
  float needle_value_scale = 4.0f;
  // Prompt queries provided for strategies that seed scores at prefill (H2O): the queries of
  // the last `prompt_queries` prompt positions.
  int prompt_queries = 32;

  std::string name() const;  // "structured", "uniform", "needle"
};

WorkloadSpec::Kind parse_workload_kind(const std::string& s);  // throws hb::Error

// One decode step: the new token's k, v [kv_heads][head_dim] (appended before attention)
// and the query [q_heads][head_dim] of that token.
struct DecodeStep {
  std::vector<float> k, v, q;
};

struct Workload {
  AttentionShape shape;
  WorkloadSpec spec;
  DenseKv prompt;  // [prompt_len][kv_heads][head_dim]
  std::vector<DecodeStep> steps;
  std::vector<float> prompt_queries;  // [n][q_heads][head_dim], positions prompt_len-n..
  int64_t needle_token = -1;          // position of the planted needle, -1 if none
  std::vector<float> needle_value;    // [kv_heads][head_dim] distinctive value direction (unit)
  std::string source;                 // "synthetic:<spec>" or "trace:<file>"

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
