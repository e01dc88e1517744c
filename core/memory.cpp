#include "core/memory.h"

#include <cstdlib>
#include <cstring>
#include <new>

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
void memcpy_2d(void* dst, size_t dst_pitch, const void* src, size_t src_pitch, size_t width,
               size_t rows) {
  for (size_t r = 0; r < rows; ++r)
    std::memcpy(static_cast<char*>(dst) + r * dst_pitch,
                static_cast<const char*>(src) + r * src_pitch, width);
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

class PlainHostAllocator final : public BufferAllocator {
 public:
  explicit PlainHostAllocator(MemoryLocation loc) : loc_(loc) {}
  Buffer allocate(size_t bytes) override {
    const size_t align = 4096;
    const size_t rounded = (bytes + align - 1) / align * align;
    void* p = rounded ? std::aligned_alloc(align, rounded) : nullptr;
    if (rounded && !p)
      throw Error("out of host memory allocating " + std::to_string(bytes) + " bytes",
                  "use shorter sequences or a smaller batch", kExitFailure);
    if (p) std::memset(p, 0, rounded);  // prefault here, not inside a timed region
    return Buffer(p, bytes, loc_, [](void* q, size_t) { std::free(q); });
  }
  MemoryLocation location() const override { return loc_; }

 private:
  MemoryLocation loc_;
};

}  // namespace

std::shared_ptr<BufferAllocator> host_allocator(MemoryLocation loc) {
  return std::make_shared<PlainHostAllocator>(loc);
}

}  // namespace hb
