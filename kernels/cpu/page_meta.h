#pragma once
// Quest's page metadata and page bound: per page of each KV head, the elementwise minimum and
// maximum of its keys, and the upper bound they give on q.k for any key of the page,
//   U(q, page) = sum_j max(q_j * kmax_j, q_j * kmin_j).
// Mechanisms only: which pages to keep is the strategy's business.
#include <cstdint>

#include "core/kv_cache.h"
#include "core/thread_pool.h"

namespace hb::cpu {

// For pages [first_page, end_page) of every head of `kv` (clamped to each head's pages):
// elementwise min and max over the page's valid tokens, written in the cache dtype (lossless:
// the bounds are cache values) to kmin/kmax [kv_head][page_stride][head_dim].
void page_minmax(const PagedKvView& kv, int64_t first_page, int64_t end_page, void* kmin, void* kmax,
                 int64_t page_stride, ThreadPool* pool = nullptr);

// Folds one more key (fp32 [head_dim], already representable in the dtype) into page `page`
// of head `kv_head`; `first` starts the page's bounds afresh (the page's first token).
void page_minmax_add(const float* k, int kv_head, int64_t page, bool first, int head_dim, DType dtype, void* kmin,
                     void* kmax, int64_t page_stride);

// scores[h * score_stride + p] for KV head h and page p in [0, num_pages): the largest bound
// U over the query heads sharing KV head h (a page matters to a KV head if it matters to any
// of its query heads). q is fp32 [q_heads][head_dim], heads grouped contiguously (GQA).
// scale multiplies the bound (use the attention scale to get logit units).
void page_bound_scores(const float* q, int q_heads, int kv_heads, int head_dim, DType dtype, const void* kmin,
                       const void* kmax, int64_t page_stride, int64_t num_pages, float scale, float* scores,
                       int64_t score_stride, ThreadPool* pool = nullptr);

}  // namespace hb::cpu
