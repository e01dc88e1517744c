#include "core/huge_page_allocator.h"

#include <sys/mman.h>

#include <cstdint>

#include "core/block_cache.h"

namespace hb::huge_pages {

namespace {

constexpr size_t kHugePage = size_t{2} << 20;
size_t rounded(size_t bytes) { return (bytes + kHugePage - 1) / kHugePage * kHugePage; }

// Released mappings, kept for the next request (a sweep's units ask for the same sizes again).
// Sizes are whole huge pages, so a split block stays 2 MiB aligned.
BlockCache& kept() {
  static BlockCache* cache = new BlockCache();  // never destroyed: vectors may be freed at exit
  return *cache;
}

}  // namespace

void* map(size_t bytes) {
  const size_t len = rounded(bytes);
  if (void* p = kept().take(len)) return p;
  // One huge page more than needed, then the unaligned head and the tail are given back: THP
  // only backs 2 MiB-aligned ranges.
  void* raw =
      mmap(nullptr, len + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const auto start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (start + kHugePage - 1) / kHugePage * kHugePage;
  if (aligned > start) munmap(raw, aligned - start);
  const uintptr_t end = start + len + kHugePage;
  if (end > aligned + len) munmap(reinterpret_cast<void*>(aligned + len), end - aligned - len);
  madvise(reinterpret_cast<void*>(aligned), len, MADV_HUGEPAGE);  // advice: failing is harmless
  return reinterpret_cast<void*>(aligned);
}

void unmap(void* p, size_t bytes) { kept().give(p, rounded(bytes)); }

}  // namespace hb::huge_pages
