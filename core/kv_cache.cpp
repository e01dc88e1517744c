#include "core/kv_cache.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "core/thread_pool.h"

namespace hb {

PageArena::PageArena(std::shared_ptr<BufferAllocator> alloc, size_t block_bytes,
                     size_t blocks_per_slab)
    : alloc_(std::move(alloc)),
      location_(alloc_->location()),
      block_bytes_(block_bytes),
      blocks_per_slab_(std::max<size_t>(1, blocks_per_slab)) {}

void PageArena::reserve(size_t blocks) {
  const size_t free_blocks = released_.size() + fresh_.size();
  if (free_blocks >= blocks) return;
  const size_t need = blocks - free_blocks;
  Buffer slab = alloc_->allocate(need * block_bytes_);
  auto* base = slab.as<std::byte>();
  // Hand out lowest addresses first so consecutive pages are consecutive in memory.
  for (size_t i = need; i-- > 0;) fresh_.push_back(base + i * block_bytes_);
  slabs_.push_back(std::move(slab));
}

std::byte* PageArena::acquire() {
  std::vector<std::byte*>& from = released_.empty() ? fresh_ : released_;
  if (from.empty()) reserve(blocks_per_slab_);  // refills fresh_, which `from` then is
  std::byte* b = from.back();
  from.pop_back();
  ++in_use_;
  return b;
}

std::byte* PageArena::acquire_zeroed() {
  const bool known_zero = released_.empty() && alloc_->zeroes_memory();
  std::byte* b = acquire();
  if (!known_zero) {
    const std::vector<std::byte> zeros(block_bytes_);
    copy_in(b, zeros.data(), zeros.size());
  }
  return b;
}

void PageArena::release(std::byte* block) {
  released_.push_back(block);
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

void PagedKvCache::ensure_room(Head& h, PageArena& ka, PageArena& va, bool zero) {
  if (h.num_tokens < static_cast<int64_t>(h.pages.size()) * page_tokens_) return;
  if (ka.block_bytes() != block_bytes() || va.block_bytes() != block_bytes())
    throw Error("internal: page arena block size does not match the cache's page size", {},
                kExitFailure);
  // Slots past the last token must read as zero (kernels may load whole blocks).
  PageRef p = zero ? PageRef{ka.acquire_zeroed(), va.acquire_zeroed()}
                   : PageRef{ka.acquire(), va.acquire()};
  h.pages.push_back(p);
  h.k_arena.push_back(&ka);
  h.v_arena.push_back(&va);
}

void PagedKvCache::append(const DenseKv& src, int64_t begin, int64_t end, PageArena& ka,
                          PageArena& va, ThreadPool* pool) {
  if (src.kv_heads != shape_.kv_heads || src.head_dim != shape_.head_dim)
    throw Error("KV source has " + std::to_string(src.kv_heads) + " heads x " +
                    std::to_string(src.head_dim) + " dims but the cache is " + shape_.to_string(),
                "make the workload and the cache use the same attention shape");
  if (begin < 0 || end > src.tokens || begin > end)
    throw Error("internal: KV append range out of bounds", {}, kExitFailure);
  const int64_t P = page_tokens_;
  std::vector<std::byte> scratch;
  const auto page_aligned = [&] {
    return std::all_of(heads_.begin(), heads_.end(),
                       [&](const Head& h) { return h.num_tokens % P == 0; });
  };
  // Many whole pages in host memory: acquired in order here, converted and written in parallel
  // (a 128k-token prompt is half a second of single-threaded conversion per load).
  const int64_t whole = page_aligned() ? (end - begin) / P : 0;
  if (pool && pool->size() > 1 && whole * shape_.kv_heads >= kMinParallelPages &&
      ka.host_accessible() && va.host_accessible()) {
    std::vector<size_t> first_page(heads_.size());
    for (int64_t i = 0; i < whole; ++i)
      for (int h = 0; h < shape_.kv_heads; ++h) {
        if (i == 0) first_page[h] = static_cast<size_t>(heads_[h].num_tokens / P);
        ensure_room(heads_[h], ka, va, /*zero=*/false);  // written whole below
        heads_[h].num_tokens += P;
      }
    std::vector<std::vector<std::byte>> scratches(static_cast<size_t>(pool->size()));
    pool->parallel_for(whole * shape_.kv_heads, [&](int64_t task, int worker) {
      const int h = static_cast<int>(task % shape_.kv_heads);
      const int64_t i = task / shape_.kv_heads;
      write_page(h, first_page[h] + static_cast<size_t>(i), src, begin + i * P, scratches[worker]);
    });
    begin += whole * P;
  }
  for (int64_t t = begin; t < end;) {
    // Whole pages where every head starts one (a prompt's load): one copy per block instead
    // of two per token and head (each a device copy in GPU memory), and no strided stores.
    // Pages are acquired in the same order as token by token: page i of every head in turn.
    if (end - t >= P && page_aligned()) {
      for (int h = 0; h < shape_.kv_heads; ++h) {
        ensure_room(heads_[h], ka, va, /*zero=*/false);  // written whole just below
        write_page(h, static_cast<size_t>(heads_[h].num_tokens / P), src, t, scratch);
        heads_[h].num_tokens += P;
      }
      t += P;
      continue;
    }
    for (int h = 0; h < shape_.kv_heads; ++h) {
      Head& head = heads_[h];
      ensure_room(head, ka, va);
      head.num_tokens++;
      write_token(h, head.num_tokens - 1, src.k_row(t, h), src.v_row(t, h));
    }
    ++t;
  }
}

namespace {

// rows [n][d] -> columns [d][n], elements of type T (the K block's layout).
template <class T>
void transpose_block(const std::byte* rows, std::byte* cols, int64_t n, int d) {
  const auto* r = reinterpret_cast<const T*>(rows);
  auto* c = reinterpret_cast<T*>(cols);
  for (int64_t i = 0; i < n; ++i)
    for (int j = 0; j < d; ++j) c[j * n + i] = r[i * d + j];
}

}  // namespace

void PagedKvCache::write_page(int kv_head, size_t page, const DenseKv& src, int64_t t,
                              std::vector<std::byte>& scratch) {
  Head& head = heads_[kv_head];
  const int d = shape_.head_dim;
  const int64_t P = page_tokens_;
  const size_t es = dtype_size(shape_.kv_dtype), block = block_bytes();
  scratch.resize(3 * block);
  std::byte *v_rows = scratch.data(), *k_rows = v_rows + block, *k_cols = k_rows + block;
  for (int64_t i = 0; i < P; ++i) {
    convert_from_fp32(shape_.kv_dtype, src.v_row(t + i, kv_head), v_rows + i * d * es, d);
    convert_from_fp32(shape_.kv_dtype, src.k_row(t + i, kv_head), k_rows + i * d * es, d);
  }
  switch (es) {
    case 2:
      transpose_block<uint16_t>(k_rows, k_cols, P, d);
      break;
    case 4:
      transpose_block<uint32_t>(k_rows, k_cols, P, d);
      break;
    default:
      throw Error("internal: KV element of " + std::to_string(es) + " bytes", {}, kExitFailure);
  }
  head.v_arena[page]->copy_in(head.pages[page].v, v_rows, block);
  head.k_arena[page]->copy_in(head.pages[page].k, k_cols, block);
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
