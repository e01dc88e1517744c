#include "core/block_cache.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>

namespace hb {

BlockCache::BlockCache() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  const size_t phys = pages > 0 && page > 0 ? size_t(pages) * size_t(page) : 0;
  limit_ = std::min(phys / 8, size_t{4} << 30);
}

void* BlockCache::take(size_t bytes) {
  std::vector<Block> drop;
  {
    std::lock_guard lock(mu_);
    for (size_t i = kept_.size(); i-- > 0;)
      if (kept_[i].bytes == bytes) {
        void* p = kept_[i].p;
        held_ -= bytes;
        kept_.erase(kept_.begin() + static_cast<std::ptrdiff_t>(i));
        return p;
      }
    // Else the front of the smallest larger block, the rest kept: strategies' arenas come in
    // many sizes, and a size that matched no block used to cost a fresh, slow mapping.
    size_t best = kept_.size();
    for (size_t i = 0; i < kept_.size(); ++i)
      if (kept_[i].bytes > bytes && (best == kept_.size() || kept_[i].bytes < kept_[best].bytes))
        best = i;
    if (best < kept_.size()) {
      Block& k = kept_[best];
      void* p = k.p;
      k.p = static_cast<std::byte*>(k.p) + bytes;
      k.bytes -= bytes;
      held_ -= bytes;
      return p;
    }
    for (size_t freed = 0; freed < bytes && !kept_.empty();) {
      freed += kept_.front().bytes;
      drop_oldest(drop);
    }
  }
  for (const Block& b : drop) munmap(b.p, b.bytes);
  return nullptr;
}

void BlockCache::give(void* p, size_t bytes) {
  std::vector<Block> drop;
  {
    std::lock_guard lock(mu_);
    // Kept neighbours (the rest of a block take() split) join it again.
    for (size_t i = 0; i < kept_.size();) {
      auto* at = static_cast<std::byte*>(kept_[i].p);
      const bool before = at + kept_[i].bytes == static_cast<std::byte*>(p);
      if (!before && static_cast<std::byte*>(p) + bytes != at) {
        ++i;
        continue;
      }
      if (before) p = at;
      bytes += kept_[i].bytes;
      held_ -= kept_[i].bytes;
      kept_.erase(kept_.begin() + static_cast<std::ptrdiff_t>(i));
    }
    if (bytes > limit_) {
      drop.push_back({p, bytes});
    } else {
      kept_.push_back({p, bytes});
      held_ += bytes;
      while (held_ > limit_) drop_oldest(drop);
    }
  }
  for (const Block& b : drop) munmap(b.p, b.bytes);
}

size_t BlockCache::held() {
  std::lock_guard lock(mu_);
  return held_;
}

void BlockCache::drop_oldest(std::vector<Block>& drop) {
  drop.push_back(kept_.front());
  held_ -= kept_.front().bytes;
  kept_.erase(kept_.begin());
}

}  // namespace hb
