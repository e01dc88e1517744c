#pragma once
// The KV of every sequence of a batch for one layer, with the page arenas that hold it: the
// part of loading and appending that every strategy shares (policies stay in the strategies).
#include <memory>
#include <string>
#include <vector>

#include "core/kv_cache.h"
#include "core/strategy.h"

namespace hb {

class KvSet {
 public:
  // K blocks come from k_alloc and V blocks from v_alloc (the same allocator is fine).
  KvSet(const Problem& problem, std::shared_ptr<BufferAllocator> k_alloc,
        std::shared_ptr<BufferAllocator> v_alloc);

  // Pre-reserves pages for `tokens` tokens per sequence, so no allocation happens in timed steps.
  void reserve_tokens(int64_t tokens);
  // Appends prompt tokens [begin, end) of every sequence (with `pool`: PagedKvCache::append).
  void append_prompt(int64_t begin, int64_t end, ThreadPool* pool = nullptr);
  // Appends decode step s's token of every sequence (returns bytes written, for traffic).
  int64_t append_step(int s);

  int batch() const { return static_cast<int>(caches_.size()); }
  PagedKvCache& cache(int b) { return *caches_[b]; }
  const PagedKvCache& cache(int b) const { return *caches_[b]; }
  PageArena& k_arena() { return *k_arena_; }
  PageArena& v_arena() { return *v_arena_; }
  // Bytes one token of one sequence occupies in pages (all KV heads, K and V).
  int64_t bytes_per_token() const;
  // Page-rounded bytes for `tokens` tokens of every sequence.
  int64_t bytes_for(int64_t tokens) const;
  // The arenas' memory, for placement verification ("K" and "V", or "K+V" when shared).
  std::vector<MemoryRegion> regions(const std::string& prefix = "") const;

 private:
  const Problem& problem_;
  std::unique_ptr<PageArena> k_arena_, v_arena_owned_;
  PageArena* v_arena_;
  std::vector<std::unique_ptr<PagedKvCache>> caches_;
};

}  // namespace hb
