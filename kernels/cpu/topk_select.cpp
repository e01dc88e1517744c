#include "kernels/cpu/topk_select.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "kernels/cpu/kth_largest.h"

namespace hb::cpu {

namespace {

constexpr float kLow = -std::numeric_limits<float>::infinity();
inline float key(float x) { return std::isnan(x) ? kLow : x; }  // NaN ranks as -inf

// Exact k largest of v[0, n) given a lower bound `t` with count(key >= t) >= k: candidates are
// gathered in index order in one pass, the k-th largest among them is found on a plain float
// copy (radix selection), and a walk over the candidates takes everything above it plus the
// lowest-index ties.
// Returns false (nothing written) when the bound admits fewer than k values.
bool select_above(const float* v, int64_t n, int64_t k, float t, int32_t* idx, float* val,
                  std::vector<std::pair<float, int32_t>>& cand, std::vector<float>& tmp) {
  // Branchless: every value is written, the cursor advances only past the kept ones.
  cand.resize(static_cast<size_t>(n) + 1);
  int64_t c = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float x = key(v[i]);
    cand[c] = {x, static_cast<int32_t>(i)};
    c += x >= t;
  }
  if (c < k) return false;
  tmp.resize(static_cast<size_t>(c));
  for (int64_t i = 0; i < c; ++i) tmp[i] = cand[i].first;
  const KthLargest kth = kth_largest(tmp.data(), c, k);
  const float thr = kth.value;
  int64_t ties = k - kth.above;  // values equal to thr to take, lowest indices first
  int64_t out = 0;
  for (int64_t i = 0; i < c && out < k; ++i) {
    const float x = cand[i].first;
    if (x > thr || (x == thr && ties > 0)) {
      if (!(x > thr)) --ties;
      idx[out] = cand[i].second;
      if (val) val[out] = v[cand[i].second];
      ++out;
    }
  }
  return true;
}

void one_row(const float* v, int64_t n, int64_t k, int32_t* idx, float* val) {
  if (k <= 0) return;
  if (k >= n) {
    for (int64_t i = 0; i < n; ++i) {
      idx[i] = static_cast<int32_t>(i);
      if (val) val[i] = v[i];
    }
    return;
  }
  thread_local std::vector<std::pair<float, int32_t>> cand;
  thread_local std::vector<float> sample, tmp;
  // Estimate the threshold from a strided sample, aiming a little below the k-th largest so
  // the one pass almost always keeps at least k candidates (then the selection is exact).
  constexpr int64_t kSample = 1024;
  if (n > 4 * kSample && k * 8 < n) {
    const int64_t stride = n / kSample;
    sample.clear();
    for (int64_t i = 0; i < n; i += stride) sample.push_back(key(v[i]));
    const double frac = static_cast<double>(k) / static_cast<double>(n);
    // 1.5x the expected count plus a few standard deviations of the sampling error.
    const double want = frac * static_cast<double>(sample.size());
    const int64_t pos =
        std::min<int64_t>(static_cast<int64_t>(sample.size()) - 1,
                          static_cast<int64_t>(1.5 * want + 4.0 * std::sqrt(want) + 8.0));
    std::nth_element(sample.begin(), sample.begin() + pos, sample.end(), std::greater<float>());
    if (select_above(v, n, k, sample[pos], idx, val, cand, tmp)) return;
  }
  select_above(v, n, k, kLow, idx, val, cand, tmp);  // every value qualifies: exact by construction
}

}  // namespace

void topk_select_rows(const float* values, int rows, int64_t n, int64_t stride, int64_t k,
                      int32_t* idx_out, float* val_out, ThreadPool* pool) {
  k = std::clamp<int64_t>(k, 0, n);
  auto run = [&](int64_t r, int) {
    one_row(values + r * stride, n, k, idx_out + r * k, val_out ? val_out + r * k : nullptr);
  };
  if (pool)
    pool->parallel_for(rows, run);
  else
    for (int r = 0; r < rows; ++r) run(r, 0);
}

}  // namespace hb::cpu
