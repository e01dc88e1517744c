#pragma once
// Building page blocks (core/kv_cache.h layout) from dense rows, for KV that arrives as rows
// over the link (InfiniGen's fetched tokens) and must be attended by the paged kernels.
#include <cstddef>
#include <cstdint>

#include "core/dtype.h"

namespace hb::cpu {

// Rows [count][head_dim] of K and V in `dtype` into consecutive pages: K block i is
// [head_dim][page_tokens] (token-minor), V block i is [page_tokens][head_dim]; blocks are
// k_blocks + i * block_bytes and v_blocks + i * block_bytes. Slots past `count` up to the end
// of the last page are zeroed (kernels may read whole blocks).
void rows_to_pages(const void* k_rows, const void* v_rows, int64_t count, int head_dim,
                   int page_tokens, DType dtype, std::byte* k_blocks, std::byte* v_blocks);

// Writes one token given in fp32 into slot `slot` of the paged blocks above (converting);
// v may be null for key-only pages (no V blocks).
void write_row_to_pages(const float* k, const float* v, int64_t slot, int head_dim, int page_tokens,
                        DType dtype, std::byte* k_blocks, std::byte* v_blocks);

}  // namespace hb::cpu
