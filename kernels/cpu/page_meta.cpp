#include "kernels/cpu/page_meta.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "core/dtype.h"

namespace hb::cpu {

namespace {
std::byte* row_at(void* base, int64_t h, int64_t page, int64_t page_stride, int d, size_t es) {
  return static_cast<std::byte*>(base) + ((h * page_stride + page) * d) * es;
}
const std::byte* row_at(const void* base, int64_t h, int64_t page, int64_t page_stride, int d, size_t es) {
  return static_cast<const std::byte*>(base) + ((h * page_stride + page) * d) * es;
}
}  // namespace

void page_minmax(const PagedKvView& kv, int64_t first_page, int64_t end_page, void* kmin, void* kmax,
                 int64_t page_stride, ThreadPool* pool) {
  const int d = kv.head_dim, P = kv.page_tokens;
  const size_t es = dtype_size(kv.dtype);
  auto one_head = [&](int64_t h, int) {
    const KvHeadView& head = kv.heads[h];
    const int64_t pages = (head.num_tokens + P - 1) / P;
    std::vector<float> row(P), lo(d), hi(d);
    for (int64_t p = std::max<int64_t>(first_page, 0); p < std::min(end_page, pages); ++p) {
      const int valid = static_cast<int>(std::min<int64_t>(P, head.num_tokens - p * P));
      for (int j = 0; j < d; ++j) {  // K block row j holds dim j of every slot
        convert_to_fp32(kv.dtype, head.pages[p].k + k_block_offset(j, 0, P) * es, row.data(), valid);
        float a = std::numeric_limits<float>::infinity(), b = -a;
        for (int t = 0; t < valid; ++t) {
          a = std::min(a, row[t]);
          b = std::max(b, row[t]);
        }
        lo[j] = a;
        hi[j] = b;
      }
      convert_from_fp32(kv.dtype, lo.data(), row_at(kmin, h, p, page_stride, d, es), d);
      convert_from_fp32(kv.dtype, hi.data(), row_at(kmax, h, p, page_stride, d, es), d);
    }
  };
  if (pool) pool->parallel_for(kv.kv_heads, one_head);
  else for (int h = 0; h < kv.kv_heads; ++h) one_head(h, 0);
}

void page_minmax_add(const float* k, int kv_head, int64_t page, bool first, int d, DType dtype, void* kmin,
                     void* kmax, int64_t page_stride) {
  const size_t es = dtype_size(dtype);
  std::byte* mn = row_at(kmin, kv_head, page, page_stride, d, es);
  std::byte* mx = row_at(kmax, kv_head, page, page_stride, d, es);
  std::vector<float> lo(k, k + d), hi(k, k + d);
  if (!first) {
    std::vector<float> a(d), b(d);
    convert_to_fp32(dtype, mn, a.data(), d);
    convert_to_fp32(dtype, mx, b.data(), d);
    for (int j = 0; j < d; ++j) {
      lo[j] = std::min(lo[j], a[j]);
      hi[j] = std::max(hi[j], b[j]);
    }
  }
  convert_from_fp32(dtype, lo.data(), mn, d);
  convert_from_fp32(dtype, hi.data(), mx, d);
}

void page_bound_scores(const float* q, int q_heads, int kv_heads, int d, DType dtype, const void* kmin,
                       const void* kmax, int64_t page_stride, int64_t num_pages, float scale, float* scores,
                       int64_t score_stride, ThreadPool* pool) {
  const int G = q_heads / kv_heads;
  const size_t es = dtype_size(dtype);
  constexpr int64_t kPagesPerTask = 64;
  const int64_t tasks_per_head = (num_pages + kPagesPerTask - 1) / kPagesPerTask;
  auto task = [&](int64_t t, int) {
    const int h = static_cast<int>(t / tasks_per_head);
    const int64_t p0 = (t % tasks_per_head) * kPagesPerTask, p1 = std::min(num_pages, p0 + kPagesPerTask);
    std::vector<float> lo(d), hi(d);
    for (int64_t p = p0; p < p1; ++p) {
      convert_to_fp32(dtype, row_at(kmin, h, p, page_stride, d, es), lo.data(), d);
      convert_to_fp32(dtype, row_at(kmax, h, p, page_stride, d, es), hi.data(), d);
      float best = -std::numeric_limits<float>::infinity();
      for (int g = 0; g < G; ++g) {
        const float* qg = q + static_cast<size_t>(h * G + g) * d;
        float u = 0;
        for (int j = 0; j < d; ++j) u += qg[j] * (qg[j] >= 0 ? hi[j] : lo[j]);  // = max(q*max, q*min)
        best = std::max(best, u);
      }
      scores[h * score_stride + p] = best * scale;
    }
  };
  if (pool) pool->parallel_for(kv_heads * tasks_per_head, task);
  else for (int64_t t = 0; t < kv_heads * tasks_per_head; ++t) task(t, 0);
}

}  // namespace hb::cpu
