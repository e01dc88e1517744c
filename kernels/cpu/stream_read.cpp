#include "kernels/cpu/stream_read.h"

#include <vector>

#include "kernels/cpu/decode_kernel.h"
#include "kernels/cpu/work_split.h"

namespace hb::cpu {

uint64_t stream_read(const void* p, size_t bytes, ThreadPool& pool) {
  // Same task granularity as decode_attention (work_split.h) so neither side of the
  // comparison gets better load balance; pieces are whole 64-byte lines.
  const KernelTable& k = kernels_for(best_simd_level());
  const int64_t lines = static_cast<int64_t>(bytes / 64);
  const int64_t piece = split_size(lines, pool.size());
  const int64_t tasks = (lines + piece - 1) / piece;
  const auto* base = static_cast<const std::byte*>(p);
  std::vector<uint64_t> sums(static_cast<size_t>(tasks) + 1, 0);
  pool.parallel_for(tasks, [&](int64_t t, int) {
    const TokenRange r = TokenRange{0, lines}.part(t, piece);
    sums[t] = k.stream(base + r.begin * 64, static_cast<size_t>(r.size()) * 64);
  });
  for (size_t i = static_cast<size_t>(lines) * 64; i < bytes; ++i)
    sums.back() ^= static_cast<uint64_t>(base[i]);
  uint64_t x = 0;
  for (uint64_t s : sums) x ^= s;
  return x;
}

}  // namespace hb::cpu
