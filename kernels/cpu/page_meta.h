#pragma once
// Quest's page metadata and page bound. Per page of a KV head, the elementwise minimum and
// maximum of its keys bound q.k for every key of the page by
//   U(q, page) = sum_i max(q_i * max_i, q_i * min_i) = q . c + |q| . r,
// with the box's center c = (max + min) / 2 and radius r = (max - min) / 2. Stored as c and r
// "keys" in K-block layout ([head_dim][pages per block], page-minor), the bound of every page
// is two passes of the SIMD scoring kernel (score_logits with q and with |q|), which is how
// the strategy computes it. Mechanisms only: which pages to keep is the strategy's business.
#include <cstddef>
#include <cstdint>

#include "core/dtype.h"
#include "core/kv_cache.h"

namespace hb::cpu {

// Exact fp32 elementwise min and max over the valid keys of page `page` of head `kv_head`.
void page_box(const PagedKvView& kv, int kv_head, int64_t page, float* kmin, float* kmax);

// Folds one key into a page's box; `first` starts the box afresh (the page's first token).
void page_box_add(const float* k, int head_dim, bool first, float* kmin, float* kmax);

// Writes the box's center and radius as slot `slot` of the c and r blocks (K-block layout,
// `block_slots` slots per block), converted to `dtype`.
void write_page_bound(const float* kmin, const float* kmax, int head_dim, int block_slots,
                      DType dtype, int slot, std::byte* c_block, std::byte* r_block);

// |q| elementwise (the query the radius plane is scored with).
void abs_query(const float* q, size_t n, float* out);

}  // namespace hb::cpu
