#pragma once
// Unordered per-row top-k by threshold: the k largest values of each row, returned in
// ascending index order (the order the selected V rows are then gathered in). Same set as
// topk_rows (select.h): larger first, ties at the threshold broken by lower index; NaN counts as
// -inf (never selected ahead of a finite number). Only the output order differs. It finds the k-th
// largest value by radix selection over a plain float copy (kth_largest.h: no index
// indirection, no comparator calls), then collects indices in one pass, so it is several times
// faster than sorting indices.
#include <cstdint>

#include "core/thread_pool.h"

namespace hb::cpu {

// rows x n values with row stride `stride`; k clamped to [0, n]; idx_out / val_out are
// [rows][k] (val_out may be null). pool null: single-threaded.
void topk_select_rows(const float* values, int rows, int64_t n, int64_t stride, int64_t k,
                      int32_t* idx_out, float* val_out, ThreadPool* pool = nullptr);

}  // namespace hb::cpu
