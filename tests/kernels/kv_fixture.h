#pragma once
// Test inputs for the CPU kernels: a workload (its K/V already rounded through the cache
// dtype, so the fp64 oracle sees exactly what the cache stores) loaded into a paged cache.
#include <cmath>
#include <memory>
#include <vector>

#include "core/cpu_features.h"
#include "core/kv_cache.h"
#include "core/memory.h"
#include "core/workload.h"
#include "kernels/reference/attention_ref.h"

namespace hb::test {

// A paged cache holding tokens [begin, end) of dense KV, with its own arenas.
struct OwnedCache {
  std::unique_ptr<PageArena> k_arena, v_arena;
  std::unique_ptr<PagedKvCache> cache;
  PagedKvView view() const { return cache->view(); }
};

inline OwnedCache make_cache(const AttentionShape& shape, const DenseKv& src, int64_t begin,
                             int64_t end, int page_tokens = kDefaultPageTokens) {
  OwnedCache c;
  c.cache = std::make_unique<PagedKvCache>(shape, page_tokens);
  c.k_arena = std::make_unique<PageArena>(host_allocator(), c.cache->block_bytes());
  c.v_arena = std::make_unique<PageArena>(host_allocator(), c.cache->block_bytes());
  c.cache->append(src, begin, end, *c.k_arena, *c.v_arena);
  return c;
}

struct PagedInput {
  Workload w;
  OwnedCache kv;
  const float* q() const { return w.steps[0].q.data(); }
  PagedKvView view() const { return kv.view(); }
  const PagedKvCache& cache() const { return *kv.cache; }
};

inline PagedInput make_paged_input(const AttentionShape& shape, int64_t tokens,
                                   WorkloadSpec::Kind kind = WorkloadSpec::Kind::structured,
                                   uint64_t seed = 1, int page_tokens = kDefaultPageTokens) {
  PagedInput in;
  WorkloadSpec spec;
  spec.kind = kind;
  spec.seed = seed;
  in.w = make_workload(shape, tokens, 1, spec);
  in.kv = make_cache(shape, in.w.prompt, 0, tokens, page_tokens);
  return in;
}

// ||a - b|| / ||b|| over n values (0 when both are zero).
inline double rel_l2(const float* a, const double* b, size_t n) {
  double num = 0, den = 0;
  for (size_t i = 0; i < n; ++i) {
    num += (a[i] - b[i]) * (a[i] - b[i]);
    den += b[i] * b[i];
  }
  return den == 0 ? std::sqrt(num) : std::sqrt(num / den);
}

// Every SIMD level this CPU can run, scalar first.
inline std::vector<SimdLevel> available_levels() {
  std::vector<SimdLevel> l{SimdLevel::scalar};
  if (cpu_features().has_avx2_path()) l.push_back(SimdLevel::avx2);
  if (cpu_features().has_avx512_path()) l.push_back(SimdLevel::avx512);
  return l;
}

// fp64 oracle over tokens [begin, end) of the workload's prompt (dense rows, exactly the
// values the cache holds).
struct RefOut {
  std::vector<double> o, lse;
};
inline RefOut reference(const PagedInput& in, int64_t begin, int64_t end, double scale = 0) {
  const AttentionShape& s = in.w.shape;
  RefOut r{std::vector<double>(static_cast<size_t>(s.q_heads) * s.head_dim),
           std::vector<double>(s.q_heads)};
  const size_t row = static_cast<size_t>(s.kv_heads) * s.head_dim;
  ref::attention(s, in.q(), in.w.prompt.k.data() + begin * row, in.w.prompt.v.data() + begin * row,
                 end - begin, r.o.data(), r.lse.data(), scale);
  return r;
}

// Scaled logit of token t for query head h, in fp64.
inline double ref_logit(const PagedInput& in, const float* q, int h, int64_t t) {
  const AttentionShape& s = in.w.shape;
  const float* k = in.w.prompt.k_row(t, s.kv_head_of(h));
  double dot = 0;
  for (int j = 0; j < s.head_dim; ++j) dot += static_cast<double>(q[h * s.head_dim + j]) * k[j];
  return dot / std::sqrt(static_cast<double>(s.head_dim));
}

}  // namespace hb::test
