#pragma once
// A streaming-read kernel: reads `bytes` at `p` with the pool's threads and returns a checksum
// so the reads cannot be elided. memtier's bandwidth probe is handed one by its caller (the
// CPU engine's stream_read, kernels/cpu/stream_read.h), so the probe and the attention
// benchmark share one yardstick without memtier depending on kernels.
#include <cstddef>
#include <cstdint>

namespace hb {

class ThreadPool;

struct ReadKernel {
  const char* name = nullptr;  // recorded with every bandwidth figure it produced
  uint64_t (*read)(const void* p, size_t bytes, ThreadPool& pool) = nullptr;
  // Companions on the same threads and split, optional: the probe measures write and copy
  // bandwidth only when they are set, so a caller with nothing but a read loop still gets read
  // bandwidth and latencies. Buffers are page-aligned; bytes are a multiple of 64.
  void (*write)(void* p, size_t bytes, ThreadPool& pool) = nullptr;
  void (*copy)(void* dst, const void* src, size_t bytes, ThreadPool& pool) = nullptr;
};

}  // namespace hb
