#pragma once
// Released memory blocks (anonymous mappings), kept already faulted in for later requests: on a
// VM, faulting fresh pages in runs at 1-2 GB/s (the guest zeroes each page and the hypervisor
// backs it) against ~9 GB/s for rewriting a kept block. A request takes a block of its size, else
// the front of the smallest larger one (the rest stays kept; released neighbours join again).
// Bounded twice: at most `limit` bytes are held, oldest released first; and a request that finds
// nothing frees held blocks of at least its size, so a cache never makes the process larger than
// it was at its peak without it. Thread-safe. Users: host_allocator (core/memory.h) and
// HugePageAllocator (core/huge_page_allocator.h), each with its own.
#include <cstddef>
#include <mutex>
#include <vector>

namespace hb {

class BlockCache {
 public:
  // An eighth of physical memory, at most 4 GiB.
  BlockCache();
  explicit BlockCache(size_t limit) : limit_(limit) {}

  // A kept block of `bytes` (not rewritten: the caller initialises it), or null when none could
  // serve: then the caller maps fresh memory.
  void* take(size_t bytes);
  // Keeps [p, p + bytes) (a mapping or a piece of one, as take handed it out).
  void give(void* p, size_t bytes);
  size_t held();

 private:
  struct Block {
    void* p;
    size_t bytes;
  };
  void drop_oldest(std::vector<Block>& drop);  // mu_ held
  std::mutex mu_;
  std::vector<Block> kept_;
  size_t held_ = 0, limit_ = 0;
};

}  // namespace hb
