// core/memory.cpp: the plain host allocator (zeroed buffers, released large blocks reused) and
// the default strided copies a KV page's K column goes through.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "core/memory.h"

namespace hb {
namespace {

bool all_zero(const Buffer& b) {
  const auto* p = b.as<const unsigned char>();
  for (size_t i = 0; i < b.size(); ++i)
    if (p[i]) return false;
  return true;
}

TEST(HostAllocator, ReusesAReleasedLargeBlockZeroedAgain) {
  auto alloc = host_allocator();
  const size_t bytes = (size_t{3} << 20) + 123;  // above the kept size, not page-rounded
  void* first = nullptr;
  {
    Buffer a = alloc->allocate(bytes);
    ASSERT_TRUE(a);
    EXPECT_TRUE(all_zero(a));
    std::memset(a.data(), 0xab, a.size());
    first = a.data();
  }
  Buffer b = alloc->allocate(bytes);
  EXPECT_EQ(b.data(), first) << "the released block of the same size is handed out again";
  EXPECT_EQ(b.size(), bytes);
  EXPECT_TRUE(all_zero(b)) << "a reused block is zeroed like a fresh one";
  // While that block is live, the next buffer of the same size is fresh memory.
  Buffer c = alloc->allocate(bytes);
  EXPECT_NE(c.data(), b.data());
  EXPECT_TRUE(all_zero(c));
}

TEST(HostAllocator, ARequestOfAnotherSizeFreesHeldBlocksFirst) {
  auto alloc = host_allocator();
  const size_t mib = size_t{1} << 20;
  { Buffer a = alloc->allocate(4 * mib), b = alloc->allocate(2 * mib); }  // both released: held
  ASSERT_GE(host_allocator_held_bytes(), 6 * mib);
  const size_t before = host_allocator_held_bytes();
  Buffer other = alloc->allocate(5 * mib);  // no 5 MiB block: frees >= 5 MiB of held ones
  EXPECT_LE(host_allocator_held_bytes() + 5 * mib, before);
  EXPECT_TRUE(all_zero(other));
}

// A request with no block of its size takes the front of the smallest larger one (zeroed
// again), the rest serves the next; released, the pieces rejoin into the whole block.
TEST(HostAllocator, ALargerHeldBlockIsSplitAndRejoins) {
  auto alloc = host_allocator();
  const size_t mib = size_t{1} << 20;
  std::byte* whole = nullptr;
  {
    Buffer a = alloc->allocate(8 * mib);
    std::memset(a.data(), 0x5A, a.size());
    whole = static_cast<std::byte*>(a.data());
  }
  {
    Buffer front = alloc->allocate(3 * mib), rest = alloc->allocate(5 * mib);
    EXPECT_EQ(front.data(), whole);
    EXPECT_EQ(rest.data(), whole + 3 * mib);
    EXPECT_TRUE(all_zero(front));
    EXPECT_TRUE(all_zero(rest));
  }
  Buffer again = alloc->allocate(8 * mib);
  EXPECT_EQ(again.data(), whole);
  EXPECT_TRUE(all_zero(again));
}

TEST(HostAllocator, SmallAndEmptyBuffers) {
  auto alloc = host_allocator();
  Buffer none = alloc->allocate(0);
  EXPECT_FALSE(none);
  Buffer one = alloc->allocate(1);
  ASSERT_TRUE(one);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(one.data()) % 4096, 0u);
  EXPECT_TRUE(all_zero(one));
}

// A K column is rows of one element (2 or 4 bytes) `pitch` apart; wider runs take the general
// path. Every width must land each run at its row and touch nothing between.
TEST(BufferAllocatorCopy, StridedCopiesOfEveryRunWidth) {
  auto alloc = host_allocator();
  for (size_t width : {size_t{1}, size_t{2}, size_t{3}, size_t{4}, size_t{8}, size_t{33}}) {
    SCOPED_TRACE(width);
    const size_t rows = 7, src_pitch = width + 5, dst_pitch = width * 2 + 3;
    std::vector<unsigned char> src(rows * src_pitch);
    for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 7 + 1);
    std::vector<unsigned char> dst(rows * dst_pitch, 0xee), back(rows * src_pitch, 0xee);
    alloc->copy_in_2d(dst.data(), dst_pitch, src.data(), src_pitch, width, rows);
    alloc->copy_out_2d(back.data(), src_pitch, dst.data(), dst_pitch, width, rows);
    for (size_t r = 0; r < rows; ++r)
      for (size_t j = 0; j < dst_pitch; ++j) {
        const unsigned char want = j < width ? src[r * src_pitch + j] : 0xee;
        ASSERT_EQ(dst[r * dst_pitch + j], want) << r << "," << j;
      }
    for (size_t r = 0; r < rows; ++r)
      for (size_t j = 0; j < width; ++j)
        ASSERT_EQ(back[r * src_pitch + j], src[r * src_pitch + j]) << r << "," << j;
  }
}

}  // namespace
}  // namespace hb
