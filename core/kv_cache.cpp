#include "core/kv_cache.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"

namespace hb {

PageArena::PageArena(std::shared_ptr<BufferAllocator> alloc, size_t block_bytes,
                     size_t blocks_per_slab)
    : alloc_(std::move(alloc)),
      location_(alloc_->location()),
      block_bytes_(block_bytes),
      blocks_per_slab_(std::max<size_t>(1, blocks_per_slab)) {}

void PageArena::reserve(size_t blocks) {
  if (free_.size() >= blocks) return;
  const size_t need = blocks - free_.size();
  Buffer slab = alloc_->allocate(need * block_bytes_);
  auto* base = slab.as<std::byte>();
  // Hand out lowest addresses first so consecutive pages are consecutive in memory.
  for (size_t i = need; i-- > 0;) free_.push_back(base + i * block_bytes_);
  slabs_.push_back(std::move(slab));
}

std::byte* PageArena::acquire() {
  if (free_.empty()) reserve(blocks_per_slab_);
  std::byte* b = free_.back();
  free_.pop_back();
  ++in_use_;
  return b;
}

void PageArena::release(std::byte* block) {
  free_.push_back(block);
  --in_use_;
}

std::vector<std::pair<const void*, size_t>> PageArena::slabs() const {
  std::vector<std::pair<const void*, size_t>> r;
  for (const auto& b : slabs_) r.emplace_back(b.data(), b.size());
  return r;
}

PagedKvCache::PagedKvCache(const AttentionShape& shape, int page_tokens)
    : shape_(shape), page_tokens_(page_tokens), heads_(shape.kv_heads) {
  shape_.validate();
  if (page_tokens <= 0 || page_tokens % 16 != 0)
    throw Error(
        "page size " + std::to_string(page_tokens) + " is not a positive multiple of 16 tokens",
        "use --page-tokens 16, 32 or 64");
}

PagedKvCache::~PagedKvCache() { release_all(); }

size_t PagedKvCache::block_bytes() const {
  return static_cast<size_t>(page_tokens_) * shape_.head_dim * dtype_size(shape_.kv_dtype);
}

MemoryLocation PagedKvCache::k_location(int h, int64_t i) const {
  return heads_[h].k_arena[i]->location();
}
MemoryLocation PagedKvCache::v_location(int h, int64_t i) const {
  return heads_[h].v_arena[i]->location();
}

void PagedKvCache::ensure_room(Head& h, PageArena& ka, PageArena& va) {
  if (h.num_tokens < static_cast<int64_t>(h.pages.size()) * page_tokens_) return;
  if (ka.block_bytes() != block_bytes() || va.block_bytes() != block_bytes())
    throw Error("internal: page arena block size does not match the cache's page size", {},
                kExitFailure);
  PageRef p{ka.acquire(), va.acquire()};
  // Slots past the last token must read as zero (kernels may load whole blocks).
  std::vector<std::byte> zeros(block_bytes());
  ka.copy_in(p.k, zeros.data(), zeros.size());
  va.copy_in(p.v, zeros.data(), zeros.size());
  h.pages.push_back(p);
  h.k_arena.push_back(&ka);
  h.v_arena.push_back(&va);
}

void PagedKvCache::append(const DenseKv& src, int64_t begin, int64_t end, PageArena& ka,
                          PageArena& va) {
  if (src.kv_heads != shape_.kv_heads || src.head_dim != shape_.head_dim)
    throw Error("KV source has " + std::to_string(src.kv_heads) + " heads x " +
                    std::to_string(src.head_dim) + " dims but the cache is " + shape_.to_string(),
                "make the workload and the cache use the same attention shape");
  if (begin < 0 || end > src.tokens || begin > end)
    throw Error("internal: KV append range out of bounds", {}, kExitFailure);
  for (int64_t t = begin; t < end; ++t) {
    for (int h = 0; h < shape_.kv_heads; ++h) {
      Head& head = heads_[h];
      ensure_room(head, ka, va);
      head.num_tokens++;
      write_token(h, head.num_tokens - 1, src.k_row(t, h), src.v_row(t, h));
    }
  }
}

void PagedKvCache::append_token(const float* k, const float* v, PageArena& ka, PageArena& va) {
  const int d = shape_.head_dim;
  for (int h = 0; h < shape_.kv_heads; ++h) {
    Head& head = heads_[h];
    ensure_room(head, ka, va);
    head.num_tokens++;
    write_token(h, head.num_tokens - 1, k + h * d, v + h * d);
  }
}

void PagedKvCache::write_token(int kv_head, int64_t slot, const float* k, const float* v) {
  Head& head = heads_[kv_head];
  const int d = shape_.head_dim;
  const size_t es = dtype_size(shape_.kv_dtype);
  const PageRef& p = head.pages[slot / page_tokens_];
  const int s = static_cast<int>(slot % page_tokens_);
  // The V row is contiguous in its block.
  std::byte buf[512 * 4];
  convert_from_fp32(shape_.kv_dtype, v, buf, d);
  head.v_arena[slot / page_tokens_]->copy_in(p.v + v_block_offset(0, s, d) * es, buf, d * es);
  // K rows are a column of the block: one strided copy (element j at row j of the block).
  convert_from_fp32(shape_.kv_dtype, k, buf, d);
  head.k_arena[slot / page_tokens_]->copy_column_in(p.k + k_block_offset(0, s, page_tokens_) * es,
                                                    page_tokens_ * es, buf, es, d);
}

void PagedKvCache::read_token(int kv_head, int64_t slot, float* k, float* v) const {
  const Head& head = heads_[kv_head];
  const int d = shape_.head_dim;
  const size_t es = dtype_size(shape_.kv_dtype);
  const PageRef& p = head.pages[slot / page_tokens_];
  const int s = static_cast<int>(slot % page_tokens_);
  std::byte buf[512 * 4];
  head.v_arena[slot / page_tokens_]->copy_out(buf, p.v + v_block_offset(0, s, d) * es, d * es);
  convert_to_fp32(shape_.kv_dtype, buf, v, d);
  head.k_arena[slot / page_tokens_]->copy_column_out(
      buf, p.k + k_block_offset(0, s, page_tokens_) * es, page_tokens_ * es, es, d);
  convert_to_fp32(shape_.kv_dtype, buf, k, d);
}

size_t PagedKvCache::migrate_page(int kv_head, int64_t i, PageArena* to_k, PageArena* to_v) {
  Head& head = heads_[kv_head];
  PageRef& p = head.pages[i];
  const size_t bytes = block_bytes();
  std::vector<std::byte> staging(bytes);
  size_t moved = 0;
  auto move_block = [&](std::byte*& block, PageArena*& owner, PageArena* dest) {
    if (!dest || dest == owner) return;
    std::byte* nb = dest->acquire();
    owner->copy_out(staging.data(), block, bytes);
    dest->copy_in(nb, staging.data(), bytes);
    owner->release(block);
    block = nb;
    owner = dest;
    moved += bytes;
  };
  move_block(p.k, head.k_arena[i], to_k);
  move_block(p.v, head.v_arena[i], to_v);
  return moved;
}

void PagedKvCache::release_all() {
  for (auto& h : heads_) {
    for (size_t i = 0; i < h.pages.size(); ++i) {
      h.k_arena[i]->release(h.pages[i].k);
      h.v_arena[i]->release(h.pages[i].v);
    }
    h.pages.clear();
    h.k_arena.clear();
    h.v_arena.clear();
    h.num_tokens = 0;
  }
}

PagedKvView PagedKvCache::view() const {
  view_heads_.resize(heads_.size());
  for (size_t h = 0; h < heads_.size(); ++h)
    view_heads_[h] = KvHeadView{heads_[h].pages.data(), heads_[h].num_tokens};
  return PagedKvView{shape_.kv_heads, shape_.head_dim, page_tokens_, shape_.kv_dtype,
                     view_heads_.data()};
}

}  // namespace hb
