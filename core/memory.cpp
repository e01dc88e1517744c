#include "core/memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <vector>

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

// Released large blocks, kept (already faulted in) for the next allocation of the same size, or
// of a smaller one (split off the front of the smallest larger block; neighbours rejoin).
// A sweep loads every strategy's KV into fresh memory of the same sizes, one strategy after
// another; on a VM, faulting fresh pages in runs at 1-2 GB/s (the guest zeroes each page and
// the hypervisor backs it) against ~9 GB/s for re-zeroing a kept block. Bounded twice: at most
// an eighth of physical memory (and 4 GiB) is held, oldest released first; and a request that
// finds no block of its size first frees held blocks of at least its size, so the pool never
// makes the process larger than it was at its peak without it.
class BlockPool {
 public:
  static BlockPool& instance() {
    static BlockPool* pool = new BlockPool();  // never destroyed: buffers may outlive statics
    return *pool;
  }
  static constexpr size_t kMinBytes = size_t{1} << 20;

  void* take(size_t bytes) {
    std::vector<Kept> drop;
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
        Kept& k = kept_[best];
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
    unmap(drop);
    return nullptr;
  }
  void give(void* p, size_t bytes) {
    std::vector<Kept> drop;
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
    unmap(drop);
  }
  // A fresh block, zeroed and faulted in by the kernel in one call (MAP_POPULATE): the same
  // resident, zero memory as touching every page from user space, without a second pass over
  // it. Null when the kernel refuses.
  static void* map(size_t bytes) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    return p == MAP_FAILED ? nullptr : p;
  }
  size_t held() {
    std::lock_guard lock(mu_);
    return held_;
  }

 private:
  BlockPool() {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    const size_t phys = pages > 0 && page > 0 ? size_t(pages) * size_t(page) : 0;
    limit_ = std::min(phys / 8, size_t{4} << 30);
  }
  struct Kept {
    void* p;
    size_t bytes;
  };
  void drop_oldest(std::vector<Kept>& drop) {  // mu_ held
    drop.push_back(kept_.front());
    held_ -= kept_.front().bytes;
    kept_.erase(kept_.begin());
  }
  static void unmap(const std::vector<Kept>& blocks) {
    for (const Kept& k : blocks) munmap(k.p, k.bytes);
  }
  std::mutex mu_;
  std::vector<Kept> kept_;
  size_t held_ = 0, limit_ = 0;
};

class PlainHostAllocator final : public BufferAllocator {
 public:
  explicit PlainHostAllocator(MemoryLocation loc) : loc_(loc) {}
  Buffer allocate(size_t bytes) override {
    const size_t align = 4096;
    const size_t rounded = (bytes + align - 1) / align * align;
    const bool pooled = rounded >= BlockPool::kMinBytes;
    void* p = pooled ? BlockPool::instance().take(rounded) : nullptr;
    // Zeroed and resident before anything is timed: a kept block is re-zeroed, a fresh large one
    // comes so from the kernel (BlockPool::map), a small one is touched here.
    if (p) {
      std::memset(p, 0, rounded);
    } else if (pooled) {
      p = BlockPool::map(rounded);
    } else if (rounded) {
      p = std::aligned_alloc(align, rounded);
      if (p) std::memset(p, 0, rounded);
    }
    if (rounded && !p)
      throw Error("out of host memory allocating " + std::to_string(bytes) + " bytes",
                  "use shorter sequences or a smaller batch", kExitFailure);
    if (pooled)
      return Buffer(p, bytes, loc_,
                    [rounded](void* q, size_t) { BlockPool::instance().give(q, rounded); });
    return Buffer(p, bytes, loc_, [](void* q, size_t) { std::free(q); });
  }
  MemoryLocation location() const override { return loc_; }
  bool zeroes_memory() const override { return true; }

 private:
  MemoryLocation loc_;
};

}  // namespace

size_t host_allocator_held_bytes() { return BlockPool::instance().held(); }

std::shared_ptr<BufferAllocator> host_allocator(MemoryLocation loc) {
  return std::make_shared<PlainHostAllocator>(loc);
}

}  // namespace hb
