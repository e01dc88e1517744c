#pragma once
// The paged KV cache of one layer of one sequence, and the views kernels read.
//
// Layout contract (kernels/ rely on it; see core/README.md):
//  * Tokens are grouped in pages of `page_tokens` (a multiple of 16, default 16) per KV head.
//  * A page has two blocks that may live in different memory (HybridGen puts K and V on
//    different tiers):
//      K block: [head_dim][page_tokens], token-minor ("blocked"). A SIMD lane per token lets
//               q.k for a whole page accumulate with vertical FMAs, no horizontal sums.
//      V block: [page_tokens][head_dim], token-major. The weighted sum sum_t p_t v_t then
//               reads the block in address order.
//    Element type is the cache dtype; slots past the last valid token are zero.
//  * Each KV head has its own page list, so placement, eviction, promotion and per-head page
//    selection (Quest) all act on the same structure. A view may list any subset of pages in
//    any order; only its last page may be partially filled.
#include <cstdint>
#include <memory>
#include <vector>

#include "core/huge_page_allocator.h"
#include "core/memory.h"
#include "core/shape.h"

namespace hb {

class ThreadPool;

inline constexpr int kDefaultPageTokens = 16;

struct PageRef {
  std::byte* k = nullptr;  // K block
  std::byte* v = nullptr;  // V block
};

// What a kernel reads for one KV head: `num_tokens` tokens spread over
// ceil(num_tokens / page_tokens) pages.
struct KvHeadView {
  const PageRef* pages = nullptr;
  int64_t num_tokens = 0;
};

// What a kernel reads for one sequence: one KvHeadView per KV head.
struct PagedKvView {
  int kv_heads = 0;
  int head_dim = 0;
  int page_tokens = kDefaultPageTokens;
  DType dtype = DType::f16;
  const KvHeadView* heads = nullptr;  // [kv_heads]
};

// Fixed-size block allocator over slabs from a BufferAllocator, so pages can be created,
// freed and moved between tiers without a system call per page.
class PageArena {
 public:
  PageArena(std::shared_ptr<BufferAllocator> alloc, size_t block_bytes,
            size_t blocks_per_slab = 256);
  std::byte* acquire();
  // acquire(), with the block's bytes zero: a block never handed out before is so already when
  // the allocator zeroes (BufferAllocator::zeroes_memory); a released one is zeroed here.
  std::byte* acquire_zeroed();
  void release(std::byte* block);
  size_t block_bytes() const { return block_bytes_; }
  size_t blocks_in_use() const { return in_use_; }
  const MemoryLocation& location() const { return location_; }
  bool host_accessible() const { return alloc_->host_accessible(); }
  // Copies into / out of a block of this arena (a device copy for GPU memory).
  void copy_in(std::byte* dst, const void* src, size_t bytes) { alloc_->copy_in(dst, src, bytes); }
  void copy_out(void* dst, const std::byte* src, size_t bytes) {
    alloc_->copy_out(dst, src, bytes);
  }
  // A K column: `rows` elements of `elem` bytes, `pitch` bytes apart in the block, dense on
  // the host side; one allocator call (one 2D copy for device memory).
  void copy_column_in(std::byte* dst, size_t pitch, const void* src, size_t elem, size_t rows) {
    alloc_->copy_in_2d(dst, pitch, src, elem, elem, rows);
  }
  void copy_column_out(void* dst, const std::byte* src, size_t pitch, size_t elem, size_t rows) {
    alloc_->copy_out_2d(dst, elem, src, pitch, elem, rows);
  }
  // Pre-reserves room for `blocks` more blocks (one slab) so timed code never allocates.
  void reserve(size_t blocks);
  // The slabs' address ranges (for page-placement verification).
  std::vector<std::pair<const void*, size_t>> slabs() const;

 private:
  std::shared_ptr<BufferAllocator> alloc_;
  MemoryLocation location_;
  size_t block_bytes_, blocks_per_slab_, in_use_ = 0;
  std::vector<Buffer> slabs_;
  // Free blocks: released ones are handed out first (still warm in cache); fresh ones keep
  // whatever the allocator gave them.
  std::vector<std::byte*> released_, fresh_;
};

// Dense fp32 KV as produced by workloads: [tokens][kv_heads][head_dim] for k and for v.
struct DenseKv {
  int64_t tokens = 0;
  int kv_heads = 0, head_dim = 0;
  // A long prompt's K and V are a GiB of fp32, made once per unit: huge pages fault it in.
  std::vector<float, HugePageAllocator<float>> k, v;
  const float* k_row(int64_t t, int h) const { return k.data() + (t * kv_heads + h) * head_dim; }
  const float* v_row(int64_t t, int h) const { return v.data() + (t * kv_heads + h) * head_dim; }
};

// One layer of one sequence. Host-accessible arenas are filled directly; for device arenas
// (CUDA) the accelerator uploads through its own path and only the page table lives here.
class PagedKvCache {
 public:
  PagedKvCache(const AttentionShape& shape, int page_tokens = kDefaultPageTokens);

  const AttentionShape& shape() const { return shape_; }
  int page_tokens() const { return page_tokens_; }
  size_t block_bytes() const;  // bytes of one K (or V) block
  int64_t num_tokens(int kv_head) const { return heads_[kv_head].num_tokens; }
  int64_t num_pages(int kv_head) const {
    return static_cast<int64_t>(heads_[kv_head].pages.size());
  }
  const PageRef& page(int kv_head, int64_t i) const { return heads_[kv_head].pages[i]; }
  MemoryLocation k_location(int kv_head, int64_t i) const;
  MemoryLocation v_location(int kv_head, int64_t i) const;

  // Appends tokens [begin, end) of `src` to every head, K into `k_arena`, V into `v_arena`,
  // converting to the cache dtype. With `pool` (not running anything else), many whole pages on
  // host-accessible arenas are written by its workers; the layout is the same either way.
  void append(const DenseKv& src, int64_t begin, int64_t end, PageArena& k_arena,
              PageArena& v_arena, ThreadPool* pool = nullptr);
  // Fewer whole pages than this (over all heads) are not worth waking a pool for.
  static constexpr int64_t kMinParallelPages = 256;
  // Appends one token given as fp32 rows [kv_heads][head_dim].
  void append_token(const float* k, const float* v, PageArena& k_arena, PageArena& v_arena);
  // Overwrites token `slot` of one head in place (eviction reuses slots; order is irrelevant
  // to attention once positions are encoded in the keys).
  void write_token(int kv_head, int64_t slot, const float* k, const float* v);
  // Reads token `slot` of one head back as fp32.
  void read_token(int kv_head, int64_t slot, float* k, float* v) const;
  // Moves page i of a head to other arenas (promotion / demotion); returns bytes moved.
  size_t migrate_page(int kv_head, int64_t i, PageArena* k_arena, PageArena* v_arena);
  // Returns every page to its arena.
  void release_all();

  // A view of tokens [0, num_tokens) of every head. Valid until the cache changes shape.
  PagedKvView view() const;
  ~PagedKvCache();
  PagedKvCache(const PagedKvCache&) = delete;
  PagedKvCache& operator=(const PagedKvCache&) = delete;
  PagedKvCache(PagedKvCache&&) = default;
  PagedKvCache& operator=(PagedKvCache&&) = default;

 private:
  struct Head {
    std::vector<PageRef> pages;
    std::vector<PageArena*> k_arena, v_arena;  // owner of each block
    int64_t num_tokens = 0;
  };
  // A new page when h's are full; zeroed unless the caller writes it whole (`zero` false).
  void ensure_room(Head& h, PageArena& k_arena, PageArena& v_arena, bool zero = true);
  // Writes tokens [t, t + page_tokens) of `src` as page `page` of `kv_head` (acquired): one
  // copy per block. `scratch` holds a block's bytes (three blocks: V, K rows, K columns).
  void write_page(int kv_head, size_t page, const DenseKv& src, int64_t t,
                  std::vector<std::byte>& scratch);
  AttentionShape shape_;
  int page_tokens_;
  std::vector<Head> heads_;
  mutable std::vector<KvHeadView> view_heads_;
};

// Helpers shared by kernels, tests and strategies for addressing the in-page layout.
inline size_t k_block_offset(int dim, int slot, int page_tokens) {
  return static_cast<size_t>(dim) * page_tokens + slot;
}
inline size_t v_block_offset(int dim, int slot, int head_dim) {
  return static_cast<size_t>(slot) * head_dim + dim;
}

}  // namespace hb
