#include "kernels/cpu/page_pack.h"

#include <cstring>
#include <vector>

#include "core/kv_cache.h"

namespace hb::cpu {

void rows_to_pages(const void* k_rows, const void* v_rows, int64_t count, int d, int P, DType dtype,
                   std::byte* k_blocks, std::byte* v_blocks) {
  const size_t es = dtype_size(dtype), block = static_cast<size_t>(P) * d * es;
  const int64_t pages = (count + P - 1) / P;
  // V: rows are already in block order; zero the tail of the last page.
  std::memcpy(v_blocks, v_rows, count * d * es);
  if (pages * P > count) std::memset(v_blocks + count * d * es, 0, (pages * P - count) * d * es);
  const auto* kr = static_cast<const std::byte*>(k_rows);
  for (int64_t p = 0; p < pages; ++p) {
    std::byte* kb = k_blocks + p * block;
    const int valid = static_cast<int>(std::min<int64_t>(P, count - p * P));
    if (valid < P) std::memset(kb, 0, block);
    for (int t = 0; t < valid; ++t) {
      const std::byte* row = kr + ((p * P + t) * d) * es;
      for (int j = 0; j < d; ++j) std::memcpy(kb + k_block_offset(j, t, P) * es, row + j * es, es);
    }
  }
}

void write_row_to_pages(const float* k, const float* v, int64_t slot, int d, int P, DType dtype,
                        std::byte* k_blocks, std::byte* v_blocks) {
  const size_t es = dtype_size(dtype), block = static_cast<size_t>(P) * d * es;
  std::byte buf[512 * 4];
  const int64_t p = slot / P;
  const int s = static_cast<int>(slot % P);
  if (v) {
    convert_from_fp32(dtype, v, buf, d);
    std::memcpy(v_blocks + p * block + v_block_offset(0, s, d) * es, buf, d * es);
  }
  convert_from_fp32(dtype, k, buf, d);
  for (int j = 0; j < d; ++j)
    std::memcpy(k_blocks + p * block + k_block_offset(j, s, P) * es, buf + j * es, es);
}

}  // namespace hb::cpu
