#pragma once
// Buffers for the benchmarks' streaming reads: 2 MiB aligned with transparent huge pages
// requested (MADV_HUGEPAGE, honoured under THP "madvise" or "always"), as the probe's buffers
// are. With 4 KiB pages the same read measured 0-11% slower in one process, and BM_StreamRead
// gained 8-90% from huge pages in interleaved runs on the 2-core build VM (TLB walks through
// the guest's and host's tables; prefetchers stop at each 4 KiB page): it understated the roof.
#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/error.h"
#include "core/memory.h"

namespace hb::microbench {

inline Buffer huge_page_buffer(size_t bytes) {
  constexpr size_t kHuge = size_t{2} << 20;
  const size_t mapped = (bytes + kHuge - 1) / kHuge * kHuge + kHuge;  // room to align
  void* m = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED)
    throw Error("cannot map " + std::to_string(bytes) + " bytes for a benchmark");
  auto* p =
      reinterpret_cast<std::byte*>((reinterpret_cast<uintptr_t>(m) + kHuge - 1) / kHuge * kHuge);
  madvise(p, mapped - static_cast<size_t>(p - static_cast<std::byte*>(m)), MADV_HUGEPAGE);
  std::memset(p, 0, bytes);  // fault in now, not inside a timed region
  return Buffer(p, bytes, MemoryLocation{}, [m, mapped](void*, size_t) { munmap(m, mapped); });
}

// KV arenas on huge pages too, as `hybridbench run` places host KV by default (--kv-pages thp):
// a page's K or V block is 4 KiB, so on base pages each block read is a TLB miss. Measured in one
// process on the build VM (32K tokens, 1 thread): attention 0.84-0.93x and the fused K scan
// 0.89-0.94x the time on base pages.
class HugePageAllocator final : public BufferAllocator {
 public:
  Buffer allocate(size_t bytes) override { return huge_page_buffer(bytes); }
  MemoryLocation location() const override { return {}; }
};

}  // namespace hb::microbench
