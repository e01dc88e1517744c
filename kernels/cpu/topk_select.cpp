#include "kernels/cpu/topk_select.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace hb::cpu {

namespace {

void one_row(const float* v, int64_t n, int64_t k, int32_t* idx, float* val) {
  if (k <= 0) return;
  if (k >= n) {
    for (int64_t i = 0; i < n; ++i) {
      idx[i] = static_cast<int32_t>(i);
      if (val) val[i] = v[i];
    }
    return;
  }
  // NaN sorts below every number (as in topk_rows): map it to the lowest float for the search.
  constexpr float kLow = -std::numeric_limits<float>::infinity();
  thread_local std::vector<float> tmp;
  tmp.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) tmp[i] = std::isnan(v[i]) ? kLow : v[i];
  // The k-th largest value: everything strictly above it is in, then ties by index.
  std::nth_element(tmp.begin(), tmp.begin() + (k - 1), tmp.end(), std::greater<float>());
  const float thr = tmp[k - 1];
  int64_t above = 0;
  for (int64_t i = 0; i < k - 1; ++i) above += tmp[i] > thr;
  int64_t ties = k - above;  // how many values equal to thr to take (lowest indices first)
  int64_t out = 0;
  for (int64_t i = 0; i < n && out < k; ++i) {
    const float x = std::isnan(v[i]) ? kLow : v[i];
    if (x > thr || (x == thr && ties > 0)) {
      if (!(x > thr)) --ties;
      idx[out] = static_cast<int32_t>(i);
      if (val) val[out] = v[i];
      ++out;
    }
  }
}

}  // namespace

void topk_select_rows(const float* values, int rows, int64_t n, int64_t stride, int64_t k, int32_t* idx_out,
                      float* val_out, ThreadPool* pool) {
  k = std::clamp<int64_t>(k, 0, n);
  auto run = [&](int64_t r, int) {
    one_row(values + r * stride, n, k, idx_out + r * k, val_out ? val_out + r * k : nullptr);
  };
  if (pool) pool->parallel_for(rows, run);
  else
    for (int r = 0; r < rows; ++r) run(r, 0);
}

}  // namespace hb::cpu
