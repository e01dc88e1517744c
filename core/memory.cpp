#include "core/memory.h"

#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>

#include "core/block_cache.h"
#include "core/error.h"

namespace hb {

std::string_view memory_kind_name(MemoryKind k) {
  switch (k) {
    case MemoryKind::local_dram:
      return "local-dram";
    case MemoryKind::remote_dram:
      return "remote-dram";
    case MemoryKind::cxl:
      return "cxl";
    case MemoryKind::far:
      return "far";
    case MemoryKind::hbm:
      return "hbm";
    case MemoryKind::accelerator:
      return "accelerator";
  }
  return "?";
}

MemoryKind parse_memory_kind(std::string_view s) {
  for (auto k : {MemoryKind::local_dram, MemoryKind::remote_dram, MemoryKind::cxl, MemoryKind::far,
                 MemoryKind::hbm, MemoryKind::accelerator})
    if (s == memory_kind_name(k)) return k;
  throw Error("unknown memory kind '" + std::string(s) + "'",
              "use one of: local-dram, remote-dram, cxl, far, hbm, accelerator");
}

std::string MemoryLocation::to_string() const {
  std::string s(memory_kind_name(kind));
  if (node >= 0) s += "@" + std::to_string(node);
  if (emulated) s += "(emulated)";
  return s;
}

Buffer& Buffer::operator=(Buffer&& o) noexcept {
  if (this != &o) {
    reset();
    p_ = o.p_;
    bytes_ = o.bytes_;
    loc_ = o.loc_;
    release_ = std::move(o.release_);
    o.p_ = nullptr;
    o.bytes_ = 0;
  }
  return *this;
}

void Buffer::reset() {
  if (p_ && release_) release_(p_, bytes_);
  p_ = nullptr;
  bytes_ = 0;
}

void BufferAllocator::copy_in(void* dst, const void* src, size_t bytes) {
  std::memcpy(dst, src, bytes);
}
void BufferAllocator::copy_out(void* dst, const void* src, size_t bytes) {
  std::memcpy(dst, src, bytes);
}
namespace {
template <size_t Width>
void memcpy_2d_fixed(char* dst, size_t dst_pitch, const char* src, size_t src_pitch, size_t rows) {
  for (size_t r = 0; r < rows; ++r) std::memcpy(dst + r * dst_pitch, src + r * src_pitch, Width);
}

void memcpy_2d(void* dst, size_t dst_pitch, const void* src, size_t src_pitch, size_t width,
               size_t rows) {
  auto* d = static_cast<char*>(dst);
  const auto* s = static_cast<const char*>(src);
  // A K column is `head_dim` runs of one element: a constant-size copy is one move, where a
  // library call per element made loading a long prompt's K mostly call overhead.
  switch (width) {
    case 2:
      return memcpy_2d_fixed<2>(d, dst_pitch, s, src_pitch, rows);
    case 4:
      return memcpy_2d_fixed<4>(d, dst_pitch, s, src_pitch, rows);
    default:
      for (size_t r = 0; r < rows; ++r) std::memcpy(d + r * dst_pitch, s + r * src_pitch, width);
  }
}
}  // namespace

void BufferAllocator::copy_in_2d(void* dst, size_t dst_pitch, const void* src, size_t src_pitch,
                                 size_t width, size_t rows) {
  memcpy_2d(dst, dst_pitch, src, src_pitch, width, rows);
}
void BufferAllocator::copy_out_2d(void* dst, size_t dst_pitch, const void* src, size_t src_pitch,
                                  size_t width, size_t rows) {
  memcpy_2d(dst, dst_pitch, src, src_pitch, width, rows);
}

namespace {

// host_allocator's released blocks of kMinPooledBytes and more (core/block_cache.h): a sweep loads
// every strategy's KV into fresh memory, one strategy after another.
constexpr size_t kMinPooledBytes = size_t{1} << 20;
BlockCache& pool() {
  static BlockCache* cache = new BlockCache();  // never destroyed: buffers may outlive statics
  return *cache;
}

// A fresh block, zeroed and faulted in by the kernel in one call (MAP_POPULATE): the same
// resident, zero memory as touching every page from user space, without a second pass over it.
// Null when the kernel refuses.
void* map_populated(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
                 -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

class PlainHostAllocator final : public BufferAllocator {
 public:
  explicit PlainHostAllocator(MemoryLocation loc) : loc_(loc) {}
  Buffer allocate(size_t bytes) override {
    const size_t align = 4096;
    const size_t rounded = (bytes + align - 1) / align * align;
    const bool pooled = rounded >= kMinPooledBytes;
    void* p = pooled ? pool().take(rounded) : nullptr;
    // Zeroed and resident before anything is timed: a kept block is re-zeroed, a fresh large one
    // comes so from the kernel (map_populated), a small one is touched here.
    if (p) {
      std::memset(p, 0, rounded);
    } else if (pooled) {
      p = map_populated(rounded);
    } else if (rounded) {
      p = std::aligned_alloc(align, rounded);
      if (p) std::memset(p, 0, rounded);
    }
    if (rounded && !p)
      throw Error("out of host memory allocating " + std::to_string(bytes) + " bytes",
                  "use shorter sequences or a smaller batch", kExitFailure);
    if (pooled)
      return Buffer(p, bytes, loc_, [rounded](void* q, size_t) { pool().give(q, rounded); });
    return Buffer(p, bytes, loc_, [](void* q, size_t) { std::free(q); });
  }
  MemoryLocation location() const override { return loc_; }
  bool zeroes_memory() const override { return true; }

 private:
  MemoryLocation loc_;
};

}  // namespace

size_t host_allocator_held_bytes() { return pool().held(); }

std::shared_ptr<BufferAllocator> host_allocator(MemoryLocation loc) {
  return std::make_shared<PlainHostAllocator>(loc);
}

}  // namespace hb
