#pragma once
// The CPU engine's streaming read: the bandwidth yardstick the attention benchmark and
// memtier's probe compare against (same threads, same task split as decode_attention).
#include <cstddef>
#include <cstdint>

#include "core/read_kernel.h"
#include "core/thread_pool.h"

namespace hb::cpu {

// Streaming-read of `bytes` at `p`; returns a checksum so the reads are not elided.
uint64_t stream_read(const void* p, size_t bytes, ThreadPool& pool);

// Streaming write (non-temporal stores of a fixed pattern) and copy (loads + non-temporal
// stores) with the same threads and split: the probe's write and copy bandwidth. `p` / `dst`
// 64-byte aligned (any page-aligned buffer); bytes past the last whole line are plain stores.
void stream_write(void* p, size_t bytes, ThreadPool& pool);
void stream_copy(void* dst, const void* src, size_t bytes, ThreadPool& pool);

// The same kernels, named, for callers that take a ReadKernel (memtier::probe).
inline ReadKernel stream_read_kernel() {
  return {"hb::cpu::stream_read", &stream_read, &stream_write, &stream_copy};
}

}  // namespace hb::cpu
