#include "kernels/cpu/stream_read.h"

#include <vector>

#include "kernels/cpu/decode_kernel.h"
#include "kernels/cpu/work_split.h"

namespace hb::cpu {

namespace {

// Same task granularity as decode_attention (work_split.h) so neither side of the
// comparison gets better load balance; pieces are whole 64-byte lines.
struct Pieces {
  int64_t lines = 0, piece = 1, tasks = 0;
  Pieces(size_t bytes, const ThreadPool& pool)
      : lines(static_cast<int64_t>(bytes / 64)),
        piece(split_size(lines, pool.size())),
        tasks((lines + piece - 1) / piece) {}
};

// fn(task, first byte, bytes) for each piece, on the pool.
template <class F>
void for_pieces(const Pieces& ps, ThreadPool& pool, F&& fn) {
  pool.parallel_for(ps.tasks, [&](int64_t t, int) {
    const TokenRange r = TokenRange{0, ps.lines}.part(t, ps.piece);
    fn(t, static_cast<size_t>(r.begin) * 64, static_cast<size_t>(r.size()) * 64);
  });
}

}  // namespace

uint64_t stream_read(const void* p, size_t bytes, ThreadPool& pool) {
  const KernelTable& k = kernels_for(best_simd_level());
  const auto* base = static_cast<const std::byte*>(p);
  const Pieces ps(bytes, pool);
  std::vector<uint64_t> sums(static_cast<size_t>(ps.tasks) + 1, 0);
  for_pieces(ps, pool, [&](int64_t t, size_t at, size_t n) {
    sums[static_cast<size_t>(t)] = k.stream(base + at, n);
  });
  for (size_t i = static_cast<size_t>(ps.lines) * 64; i < bytes; ++i)
    sums.back() ^= static_cast<uint64_t>(base[i]);
  uint64_t x = 0;
  for (uint64_t s : sums) x ^= s;
  return x;
}

void stream_write(void* p, size_t bytes, ThreadPool& pool) {
  const KernelTable& k = kernels_for(best_simd_level());
  auto* base = static_cast<std::byte*>(p);
  for_pieces(Pieces(bytes, pool), pool,
             [&](int64_t, size_t at, size_t n) { k.fill(base + at, n, 0x9e3779b97f4a7c15ull); });
  for (size_t i = bytes / 64 * 64; i < bytes; ++i) base[i] = std::byte{0x15};
}

void stream_copy(void* dst, const void* src, size_t bytes, ThreadPool& pool) {
  const KernelTable& k = kernels_for(best_simd_level());
  auto* d = static_cast<std::byte*>(dst);
  const auto* s = static_cast<const std::byte*>(src);
  for_pieces(Pieces(bytes, pool), pool,
             [&](int64_t, size_t at, size_t n) { k.copy(d + at, s + at, n); });
  for (size_t i = bytes / 64 * 64; i < bytes; ++i) d[i] = s[i];
}

}  // namespace hb::cpu
