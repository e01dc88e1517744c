#include "kernels/cpu/compute_roof.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "kernels/cpu/decode_kernel.h"

namespace hb::cpu {
namespace {

// A small normal number in each cache dtype (values do not change the work, but denormals,
// infinities or NaN could).
void fill_block(std::vector<std::byte>& blk, DType t) {
  if (t == DType::f32) {
    const float x = 0.1f;
    for (size_t i = 0; i + 4 <= blk.size(); i += 4) std::memcpy(blk.data() + i, &x, 4);
    return;
  }
  const uint16_t x = t == DType::f16 ? 0x2e66 : 0x3dcd;  // ~0.1
  for (size_t i = 0; i + 2 <= blk.size(); i += 2) std::memcpy(blk.data() + i, &x, 2);
}

}  // namespace

double compute_roof_gbps(SimdLevel level, DType dtype, int group, int head_dim) {
  using clock = std::chrono::steady_clock;
  const KernelTable& k = kernels_for(level, head_dim);
  const size_t tile_bytes = static_cast<size_t>(head_dim) * k.tile_tokens * dtype_size(dtype);
  std::vector<std::byte> blk(tile_bytes + 64);
  fill_block(blk, dtype);
  std::vector<float> q(static_cast<size_t>(group) * head_dim, 0.01f), o(q.size(), 0.0f);
  RoofJob job;
  job.dtype = dtype;
  job.head_dim = head_dim;
  job.group = group;
  job.q = q.data();
  job.block = blk.data();
  job.o = o.data();
  job.tiles = 16;
  auto seconds = [&] {
    const auto t0 = clock::now();
    volatile float sink = k.roof(job);
    (void)sink;
    return std::chrono::duration<double>(clock::now() - t0).count();
  };
  while (job.tiles < (int64_t{1} << 24) && seconds() < 5e-4) job.tiles *= 2;
  double best = 1e30;
  for (int r = 0; r < 5; ++r) best = std::min(best, seconds());
  // Each tile stands for its K and its V bytes (the block is read as both).
  return 2.0 * static_cast<double>(tile_bytes) * static_cast<double>(job.tiles) / 1e9 / best;
}

}  // namespace hb::cpu
