#include "core/huge_page_allocator.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <vector>

namespace hb::huge_pages {

namespace {

constexpr size_t kHugePage = size_t{2} << 20;
size_t rounded(size_t bytes) { return (bytes + kHugePage - 1) / kHugePage * kHugePage; }

// Released mappings kept for the next request of the same size (a sweep's units ask for the
// same sizes again): memory first touched is slow to fault in, on a VM several times slower
// than reusing it. At most an eighth of RAM, 4 GiB, as core/memory.cpp's block pool.
class Kept {
 public:
  static Kept& instance() {
    static Kept* k = new Kept;  // never destroyed: vectors may be freed during exit
    return *k;
  }
  void* take(size_t len) {
    std::lock_guard lock(mu_);
    for (size_t i = kept_.size(); i-- > 0;)
      if (kept_[i].len == len) {
        void* p = kept_[i].p;
        held_ -= len;
        kept_.erase(kept_.begin() + static_cast<std::ptrdiff_t>(i));
        return p;
      }
    return nullptr;
  }
  void give(void* p, size_t len) {
    std::vector<Block> drop;
    {
      std::lock_guard lock(mu_);
      if (len > limit_) {
        drop.push_back({p, len});
      } else {
        kept_.push_back({p, len});
        held_ += len;
        while (held_ > limit_) {
          drop.push_back(kept_.front());
          held_ -= kept_.front().len;
          kept_.erase(kept_.begin());
        }
      }
    }
    for (const Block& b : drop) munmap(b.p, b.len);
  }

 private:
  Kept() {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    const size_t phys = pages > 0 && page > 0 ? size_t(pages) * size_t(page) : 0;
    limit_ = std::min(phys / 8, size_t{4} << 30);
  }
  struct Block {
    void* p;
    size_t len;
  };
  std::mutex mu_;
  std::vector<Block> kept_;
  size_t held_ = 0, limit_ = 0;
};

}  // namespace

void* map(size_t bytes) {
  const size_t len = rounded(bytes);
  if (void* p = Kept::instance().take(len)) return p;
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

void unmap(void* p, size_t bytes) { Kept::instance().give(p, rounded(bytes)); }

}  // namespace hb::huge_pages
