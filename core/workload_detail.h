#pragma once
// Pieces the workload generators share (core/workload*.cpp only; not part of core's API).
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/rng.h"
#include "core/workload.h"

namespace hb::workload_detail {

// Rng stream ids (the `a` of Rng(seed, a, b)) of draws added after the first generator: far
// above its ids (1, 2 + kv head, 1000 + q head) so adding them moves none of its numbers.
inline constexpr uint64_t kValueMeanStream = uint64_t{1} << 40;
inline constexpr uint64_t kLlamaStream = uint64_t{2} << 40;

// A unit vector of dimension d with a uniformly random direction.
inline std::vector<float> random_unit(Rng& rng, int d) {
  std::vector<float> v(d);
  double n = 0;
  for (auto& x : v) {
    x = rng.normal();
    n += double(x) * x;
  }
  for (auto& x : v) x = static_cast<float>(x / std::sqrt(n));
  return v;
}

// A fixed orthogonal map per KV head (three Householder reflections) so the structured
// features are spread over all dimensions instead of sitting on coordinate axes.
struct Rotation {
  std::vector<float> u[3];
  void init(Rng& rng, int d) {
    for (auto& v : u) {
      v.resize(d);
      double n = 0;
      for (auto& x : v) {
        x = rng.normal();
        n += double(x) * x;
      }
      const float s = static_cast<float>(1.0 / std::sqrt(n));
      for (auto& x : v) x *= s;
    }
  }
  void apply(float* x, int d) const {
    for (const auto& v : u) {
      float dot = 0;
      for (int i = 0; i < d; ++i) dot += v[i] * x[i];
      for (int i = 0; i < d; ++i) x[i] -= 2 * dot * v[i];
    }
  }
};

// A workload of `shape` and `spec` with nothing generated yet; `label` names it in its source.
Workload blank_workload(const AttentionShape& shape, const WorkloadSpec& spec,
                        const std::string& label);

// Keys and values of `tokens` positions [tokens][kv_heads][head_dim], all zero.
DenseKv zero_kv(int64_t tokens, int kv_heads, int head_dim);

// Calls fill(kv_head, chunk, first, last) for every KV head and every chunk [first, last) of
// 4096 positions, in parallel. With one RNG stream per (head, chunk) inside `fill`, the
// workload does not depend on the thread count.
void for_each_kv_chunk(int64_t tokens, int kv_heads,
                       const std::function<void(int, int64_t, int64_t, int64_t)>& fill);

// Splits keys/values of every position [prompt_len + decode_steps][kv_heads][head_dim] and the
// queries [n_prompt_queries + decode_steps][q_heads][head_dim] into the workload's prompt,
// prompt queries and steps; the prompt takes over `all`'s memory.
void assemble(Workload& w, DenseKv&& all, const std::vector<float>& queries,
              int64_t n_prompt_queries, int decode_steps);

// The last step of building keys and values: the values' mean direction (spec.value_mean) and
// the rounding through the KV dtype, so the fp64 reference sees exactly what the cache stores.
void finish_kv(DenseKv& all, const WorkloadSpec& spec, DType kv_dtype);

// Room for the queries [n][q_heads][head_dim]: the last min(prompt_queries, prompt_len) prompt
// positions' (`n_prompt`), then every decode step's.
struct QueryBuffer {
  int64_t n_prompt = 0, n = 0;
  std::vector<float> q;
};
QueryBuffer query_buffer(const AttentionShape& shape, const WorkloadSpec& spec, int64_t prompt_len,
                         int decode_steps);

// Adds each KV head's shared mean value direction (norm spec.value_mean * sqrt(head_dim), the
// expected norm of the per-token N(0, 1) noise times value_mean) to every value.
void add_value_mean(DenseKv& all, const WorkloadSpec& spec);

// Fails (hb::Error) on a negative length; shared by every generator.
void check_lengths(int64_t prompt_len, int decode_steps);

// The llama_like and retrieval generator (core/workload_llama.cpp).
Workload make_llama_like(const AttentionShape& shape, int64_t prompt_len, int decode_steps,
                         const WorkloadSpec& spec);

}  // namespace hb::workload_detail
