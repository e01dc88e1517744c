#include "kernels/cpu/page_meta.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace hb::cpu {

void page_box(const PagedKvView& kv, int kv_head, int64_t page, float* kmin, float* kmax) {
  const int d = kv.head_dim, P = kv.page_tokens;
  const size_t es = dtype_size(kv.dtype);
  const KvHeadView& head = kv.heads[kv_head];
  const int valid = static_cast<int>(std::clamp<int64_t>(head.num_tokens - page * P, 0, P));
  std::vector<float> row(P);
  for (int j = 0; j < d; ++j) {  // K block row j holds dim j of every slot
    convert_to_fp32(kv.dtype, head.pages[page].k + k_block_offset(j, 0, P) * es, row.data(), valid);
    float a = std::numeric_limits<float>::infinity(), b = -a;
    for (int t = 0; t < valid; ++t) {
      a = std::min(a, row[t]);
      b = std::max(b, row[t]);
    }
    kmin[j] = valid ? a : 0.0f;
    kmax[j] = valid ? b : 0.0f;
  }
}

void page_box_add(const float* k, int d, bool first, float* kmin, float* kmax) {
  for (int j = 0; j < d; ++j) {
    kmin[j] = first ? k[j] : std::min(kmin[j], k[j]);
    kmax[j] = first ? k[j] : std::max(kmax[j], k[j]);
  }
}

void write_page_bound(const float* kmin, const float* kmax, int d, int block_slots, DType dtype,
                      int slot, std::byte* c_block, std::byte* r_block) {
  const size_t es = dtype_size(dtype);
  std::byte buf[4];
  for (int j = 0; j < d; ++j) {
    const float c = 0.5f * (kmax[j] + kmin[j]), r = 0.5f * (kmax[j] - kmin[j]);
    convert_from_fp32(dtype, &c, buf, 1);
    std::memcpy(c_block + k_block_offset(j, slot, block_slots) * es, buf, es);
    convert_from_fp32(dtype, &r, buf, 1);
    std::memcpy(r_block + k_block_offset(j, slot, block_slots) * es, buf, es);
  }
}

void abs_query(const float* q, size_t n, float* out) {
  for (size_t i = 0; i < n; ++i) out[i] = std::fabs(q[i]);
}

}  // namespace hb::cpu
