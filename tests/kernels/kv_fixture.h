#pragma once
// Test inputs for the CPU kernels: a workload (its K/V already rounded through the cache
// dtype, so the fp64 oracle sees exactly what the cache stores) loaded into a paged cache.
#include <cmath>
#include <memory>
#include <vector>

#include "core/kv_cache.h"
#include "core/memory.h"
#include "core/workload.h"

namespace hb::test {

struct PagedInput {
  Workload w;
  std::unique_ptr<PageArena> k_arena, v_arena;
  std::unique_ptr<PagedKvCache> cache;
  const float* q() const { return w.steps[0].q.data(); }
  PagedKvView view() const { return cache->view(); }
};

inline PagedInput make_paged_input(const AttentionShape& shape, int64_t tokens,
                                   WorkloadSpec::Kind kind = WorkloadSpec::Kind::structured, uint64_t seed = 1,
                                   int page_tokens = kDefaultPageTokens) {
  PagedInput in;
  WorkloadSpec spec;
  spec.kind = kind;
  spec.seed = seed;
  in.w = make_workload(shape, tokens, 1, spec);
  in.cache = std::make_unique<PagedKvCache>(shape, page_tokens);
  in.k_arena = std::make_unique<PageArena>(host_allocator(), in.cache->block_bytes());
  in.v_arena = std::make_unique<PageArena>(host_allocator(), in.cache->block_bytes());
  in.cache->append(in.w.prompt, 0, tokens, *in.k_arena, *in.v_arena);
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

}  // namespace hb::test
