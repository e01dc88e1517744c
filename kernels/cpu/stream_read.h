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

// The same kernel, named, for callers that take a ReadKernel (memtier::probe).
inline ReadKernel stream_read_kernel() { return {"hb::cpu::stream_read", &stream_read}; }

}  // namespace hb::cpu
