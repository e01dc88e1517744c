#include "core/kv_cache.h"

#include <algorithm>
#include <cstring>

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/thread_pool.h"
#include "core/workload.h"

namespace hb {
namespace {

AttentionShape small_shape(DType t = DType::f16) { return AttentionShape{4, 2, 64, t}; }

// Host memory as cudaMalloc hands it out: not zeroed (filled with 0xAB here), and saying so.
class DirtyAllocator final : public BufferAllocator {
 public:
  explicit DirtyAllocator(bool says_zeroed) : says_zeroed_(says_zeroed) {}
  Buffer allocate(size_t bytes) override {
    Buffer b = host_->allocate(bytes);
    if (!says_zeroed_) std::memset(b.data(), 0xAB, bytes);
    return b;
  }
  MemoryLocation location() const override { return host_->location(); }
  bool zeroes_memory() const override { return says_zeroed_; }
  void copy_in(void* dst, const void* src, size_t bytes) override {
    ++copies;
    BufferAllocator::copy_in(dst, src, bytes);
  }
  int copies = 0;

 private:
  bool says_zeroed_;
  std::shared_ptr<BufferAllocator> host_ = host_allocator();
};

bool all_zero(const std::byte* p, size_t n) {
  return std::all_of(p, p + n, [](std::byte b) { return b == std::byte{0}; });
}

// Every token [0, n) of every head reads back exactly as the source's (workload values are
// already rounded through the dtype, so storage is exact).
void expect_tokens_read_back(const PagedKvCache& cache, const DenseKv& src, int64_t n) {
  const int d = src.head_dim;
  std::vector<float> k(d), v(d);
  for (int h = 0; h < src.kv_heads; ++h)
    for (int64_t s = 0; s < n; ++s) {
      cache.read_token(h, s, k.data(), v.data());
      for (int j = 0; j < d; ++j) {
        ASSERT_EQ(k[j], src.k_row(s, h)[j]) << "head " << h << " token " << s << " dim " << j;
        ASSERT_EQ(v[j], src.v_row(s, h)[j]) << "head " << h << " token " << s << " dim " << j;
      }
    }
}

TEST(PagedKvCache, AppendAndReadBackEveryToken) {
  for (DType t : {DType::f16, DType::bf16, DType::f32}) {
    const auto shape = small_shape(t);
    auto w = make_workload(shape, 37, 0, WorkloadSpec{});  // 37: two full pages + a partial one
    // Arenas first: the cache hands its blocks back to them when it is destroyed.
    const size_t block = PagedKvCache(shape, 16).block_bytes();
    PageArena ka(host_allocator(), block), va(host_allocator(), block);
    PagedKvCache cache(shape, 16);
    cache.append(w.prompt, 0, w.prompt.tokens, ka, va);
    ASSERT_EQ(cache.num_tokens(0), 37);
    ASSERT_EQ(cache.num_pages(1), 3);
    expect_tokens_read_back(cache, w.prompt, 37);
  }
}

// A load that starts inside a page: token by token up to the page boundary, whole pages after
// it, token by token again for the tail; every token reads back, and the tail page's empty
// slots read zero although its arena's memory was dirty.
TEST(PagedKvCache, AppendAcrossPageBoundariesMatchesTokenByToken) {
  for (DType t : {DType::f16, DType::f32}) {
    const auto shape = small_shape(t);
    auto w = make_workload(shape, 70, 0, WorkloadSpec{});
    const size_t block = PagedKvCache(shape, 16).block_bytes();
    auto kal = std::make_shared<DirtyAllocator>(false),
         val = std::make_shared<DirtyAllocator>(false);
    PageArena ka(kal, block), va(val, block);
    PagedKvCache cache(shape, 16);
    cache.append(w.prompt, 0, 5, ka, va);
    cache.append(w.prompt, 5, 70, ka, va);  // 11 tokens, 3 whole pages, 11 tokens
    ASSERT_EQ(cache.num_tokens(1), 70);
    ASSERT_EQ(cache.num_pages(0), 5);
    expect_tokens_read_back(cache, w.prompt, 70);
    std::vector<float> k(64), v(64);
    for (int h = 0; h < 2; ++h)
      for (int64_t s = 70; s < 80; ++s) {  // past the last token of the last page
        cache.read_token(h, s, k.data(), v.data());
        for (int j = 0; j < 64; ++j) ASSERT_EQ(k[j], 0.0f) << "slot " << s;
        for (int j = 0; j < 64; ++j) ASSERT_EQ(v[j], 0.0f) << "slot " << s;
      }
  }
}

// With a pool, a long load's whole pages are written by its workers: every block holds the same
// bytes as the serial load's, the tail token by token after them, slots past the end zero
// though the memory was dirty. 2 heads x 140 pages is past kMinParallelPages.
TEST(PagedKvCache, AppendWithAPoolWritesTheSameBlocks) {
  ThreadPool pool(2);
  for (DType t : {DType::f16, DType::f32}) {
    const auto shape = small_shape(t);
    const int64_t n = 16 * 140 + 7;
    static_assert(2 * 140 >= PagedKvCache::kMinParallelPages);
    auto w = make_workload(shape, n, 0, WorkloadSpec{});
    const size_t block = PagedKvCache(shape, 16).block_bytes();
    auto dirty = std::make_shared<DirtyAllocator>(false);
    PageArena ka(dirty, block), va(dirty, block), serial_ka(host_allocator(), block),
        serial_va(host_allocator(), block);
    PagedKvCache cache(shape, 16), serial(shape, 16);
    cache.append(w.prompt, 0, n, ka, va, &pool);
    serial.append(w.prompt, 0, n, serial_ka, serial_va);
    ASSERT_EQ(cache.num_tokens(1), n);
    ASSERT_EQ(cache.num_pages(0), serial.num_pages(0));
    for (int h = 0; h < 2; ++h)
      for (int64_t i = 0; i < cache.num_pages(h); ++i) {
        ASSERT_EQ(std::memcmp(cache.page(h, i).k, serial.page(h, i).k, block), 0) << h << " " << i;
        ASSERT_EQ(std::memcmp(cache.page(h, i).v, serial.page(h, i).v, block), 0) << h << " " << i;
      }
    expect_tokens_read_back(cache, w.prompt, n);
  }
}

TEST(PagedKvCache, BlockedLayoutAndZeroPadding) {
  const auto shape = AttentionShape{1, 1, 32, DType::f32};
  // Arenas first: the cache hands its blocks back to them when it is destroyed.
  const size_t block = PagedKvCache(shape, 16).block_bytes();
  PageArena ka(host_allocator(), block), va(host_allocator(), block);
  PagedKvCache cache(shape, 16);
  std::vector<float> k(32), v(32);
  for (int t = 0; t < 3; ++t) {
    for (int j = 0; j < 32; ++j) {
      k[j] = 100.0f * t + j;
      v[j] = -k[j];
    }
    cache.append_token(k.data(), v.data(), ka, va);
  }
  const auto* kb = reinterpret_cast<const float*>(cache.page(0, 0).k);
  const auto* vb = reinterpret_cast<const float*>(cache.page(0, 0).v);
  EXPECT_EQ(kb[k_block_offset(5, 2, 16)], 205.0f);   // dim 5 of token 2: token-minor K
  EXPECT_EQ(vb[v_block_offset(5, 2, 32)], -205.0f);  // token-major V
  EXPECT_EQ(kb[k_block_offset(5, 3, 16)], 0.0f);     // slot past the last token reads zero
  EXPECT_EQ(vb[v_block_offset(0, 15, 32)], 0.0f);
}

// Host memory that pretends to be device memory (not host-accessible) and counts the copy
// calls a cache makes: what a GPU allocator would turn into blocking device copies.
class CountingAllocator final : public BufferAllocator {
 public:
  Buffer allocate(size_t bytes) override { return host_->allocate(bytes); }
  MemoryLocation location() const override { return host_->location(); }
  bool host_accessible() const override { return false; }
  void copy_in(void* dst, const void* src, size_t bytes) override {
    ++copies;
    BufferAllocator::copy_in(dst, src, bytes);
  }
  void copy_out(void* dst, const void* src, size_t bytes) override {
    ++copies;
    BufferAllocator::copy_out(dst, src, bytes);
  }
  void copy_in_2d(void* dst, size_t dp, const void* src, size_t sp, size_t w, size_t r) override {
    ++copies;
    BufferAllocator::copy_in_2d(dst, dp, src, sp, w, r);
  }
  void copy_out_2d(void* dst, size_t dp, const void* src, size_t sp, size_t w, size_t r) override {
    ++copies;
    BufferAllocator::copy_out_2d(dst, dp, src, sp, w, r);
  }
  int copies = 0;

 private:
  std::shared_ptr<BufferAllocator> host_ = host_allocator();
};

// A page's slots past its last token must read zero. The zeroing pass is skipped only for a block
// nobody wrote since a zeroing allocator gave it; a released block and any block of an allocator
// that does not zero (device memory) are zeroed on acquire.
TEST(PageArena, AcquireZeroedZeroesWhatMayHoldData) {
  const size_t block = 4096;
  auto zeroing = std::make_shared<DirtyAllocator>(true);
  PageArena za(zeroing, block, 4);
  std::byte* fresh = za.acquire_zeroed();
  EXPECT_EQ(zeroing->copies, 0);  // known zero: no pass
  EXPECT_TRUE(all_zero(fresh, block));
  std::memset(fresh, 0x5A, block);
  za.release(fresh);
  std::byte* reused = za.acquire_zeroed();
  EXPECT_EQ(reused, fresh);  // released blocks come back first
  EXPECT_EQ(zeroing->copies, 1);
  EXPECT_TRUE(all_zero(reused, block));
  std::byte* next = za.acquire_zeroed();  // the free list is fresh blocks again
  EXPECT_EQ(zeroing->copies, 1);
  EXPECT_TRUE(all_zero(next, block));

  auto dirty = std::make_shared<DirtyAllocator>(false);
  PageArena da(dirty, block, 3);
  for (int i = 0; i < 5; ++i) {  // across a second slab
    std::byte* b = da.acquire_zeroed();
    EXPECT_TRUE(all_zero(b, block)) << "block " << i;
  }
  EXPECT_EQ(dirty->copies, 5);
  EXPECT_EQ(da.blocks_in_use(), 5u);
}

// Issue 16: a token written into (or read from) device memory is one copy per K and per V row,
// not one blocking copy per K element; a whole page of a prompt is one copy per block.
TEST(PagedKvCache, DeviceMemoryTokenIsOneCopyPerRow) {
  const auto shape = AttentionShape{2, 2, 128, DType::f16};
  auto w = make_workload(shape, 17, 0, WorkloadSpec{});
  const size_t block = PagedKvCache(shape, 16).block_bytes();
  auto kal = std::make_shared<CountingAllocator>(), val = std::make_shared<CountingAllocator>();
  PageArena ka(kal, block), va(val, block);
  PagedKvCache cache(shape, 16);
  cache.append(w.prompt, 0, 16, ka, va);  // one whole page per head: one copy, no zero fill
  EXPECT_EQ(kal->copies, 2);
  EXPECT_EQ(val->copies, 2);
  kal->copies = val->copies = 0;
  cache.append(w.prompt, 16, 17, ka, va);  // a new page per head
  EXPECT_EQ(kal->copies, 2 * 2);
  EXPECT_EQ(val->copies, 2 * 2);
  kal->copies = 0;
  std::vector<float> k(128), v(128);
  for (int h = 0; h < 2; ++h)
    for (int64_t s = 0; s < 17; ++s) {
      cache.read_token(h, s, k.data(), v.data());
      for (int j = 0; j < 128; ++j) {
        ASSERT_EQ(k[j], w.prompt.k_row(s, h)[j]) << "token " << s << " dim " << j;
        ASSERT_EQ(v[j], w.prompt.v_row(s, h)[j]);
      }
    }
  EXPECT_EQ(kal->copies, 2 * 17);  // one strided read per K row
}

TEST(PagedKvCache, MigratePageMovesBytesAndKeepsValues) {
  const auto shape = small_shape();
  auto w = make_workload(shape, 40, 0, WorkloadSpec{});
  const size_t block = PagedKvCache(shape, 16).block_bytes();
  PageArena fast(host_allocator({MemoryKind::local_dram, 0}), block);
  PageArena slow(host_allocator({MemoryKind::cxl, 1, true}), block);
  PagedKvCache cache(shape, 16);  // after its arenas: it hands its blocks back when destroyed
  cache.append(w.prompt, 0, 40, fast, fast);
  EXPECT_EQ(cache.migrate_page(1, 1, nullptr, &slow), cache.block_bytes());  // V only
  EXPECT_EQ(cache.v_location(1, 1).kind, MemoryKind::cxl);
  EXPECT_EQ(cache.k_location(1, 1).kind, MemoryKind::local_dram);
  EXPECT_EQ(slow.blocks_in_use(), 1u);
  std::vector<float> k(64), v(64);
  cache.read_token(1, 20, k.data(), v.data());
  EXPECT_EQ(v[3], w.prompt.v_row(20, 1)[3]);
  cache.release_all();
  EXPECT_EQ(fast.blocks_in_use(), 0u);
  EXPECT_EQ(slow.blocks_in_use(), 0u);
}

TEST(PagedKvCache, RejectsBadPageSizeAndShape) {
  EXPECT_THROW(PagedKvCache(small_shape(), 10), Error);
  EXPECT_THROW(PagedKvCache(AttentionShape{6, 4, 64, DType::f16}, 16), Error);
}

TEST(PagedKvCache, ViewListsEveryHead) {
  const auto shape = small_shape();
  auto w = make_workload(shape, 1, 0, WorkloadSpec{});
  // Arenas first: the cache hands its blocks back to them when it is destroyed.
  const size_t block = PagedKvCache(shape, 16).block_bytes();
  PageArena ka(host_allocator(), block), va(host_allocator(), block);
  PagedKvCache cache(shape, 16);
  cache.append(w.prompt, 0, 1, ka, va);
  const auto view = cache.view();
  ASSERT_EQ(view.kv_heads, 2);
  EXPECT_EQ(view.heads[1].num_tokens, 1);
  EXPECT_EQ(view.heads[1].pages[0].k, cache.page(1, 0).k);
}

}  // namespace
}  // namespace hb
