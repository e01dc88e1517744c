#pragma once
// CPU decode attention (one query token per sequence) over the paged KV cache, returning the
// partial state (o, lse) in fp32 so partials over disjoint token sets merge exactly.
// The contract of the arguments is in core/attention_args.h.
#include <cstdint>

#include "core/attention_args.h"
#include "core/cpu_features.h"
#include "core/kv_cache.h"
#include "core/thread_pool.h"

namespace hb::cpu {

// Runs `batch` independent sequences; work is split over (sequence, KV head, token split)
// across the pool and split partials are merged before returning.
void decode_attention(const DecodeAttentionArgs* seqs, int batch, ThreadPool& pool,
                      SimdLevel simd = best_simd_level());

}  // namespace hb::cpu
