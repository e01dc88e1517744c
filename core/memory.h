#pragma once
// Where bytes live. Every KV page, buffer and traffic count names a MemoryLocation so reports
// can say which tier served each byte. memtier/ classifies real nodes into these kinds; the
// accelerator owns `accelerator` memory (a GPU's HBM, or the cpu accelerator's budget).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace hb {

enum class MemoryKind : uint8_t {
  local_dram,   // DRAM on the NUMA node of the CPU that reads it
  remote_dram,  // DRAM of another socket
  cxl,          // CXL-attached memory (CPU-less node behind a CXL region/DAX)
  far,          // other CPU-less slow memory (unknown NVM, ...)
  hbm,          // CPU-visible high-bandwidth memory (MCDRAM, HBM nodes)
  accelerator,  // memory of the accelerator (GPU HBM, or the cpu accelerator's pool)
};
std::string_view memory_kind_name(MemoryKind k);   // "local-dram", "cxl", ...
MemoryKind parse_memory_kind(std::string_view s);  // throws hb::Error

struct MemoryLocation {
  MemoryKind kind = MemoryKind::local_dram;
  int node = -1;          // NUMA node (host kinds) or device index (accelerator); -1 = unbound
  bool emulated = false;  // this kind is stood in for by something else (e.g. remote node as CXL)
  std::string to_string() const;  // "local-dram@0", "cxl@2(emulated)", "accelerator@0"
  bool operator==(const MemoryLocation&) const = default;
};

// An owned block of memory at a location. Movable, not copyable.
class Buffer {
 public:
  Buffer() = default;
  Buffer(void* p, size_t bytes, MemoryLocation loc, std::function<void(void*, size_t)> release)
      : p_(p), bytes_(bytes), loc_(loc), release_(std::move(release)) {}
  Buffer(Buffer&& o) noexcept { *this = std::move(o); }
  Buffer& operator=(Buffer&& o) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { reset(); }

  void reset();
  void* data() const { return p_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(p_);
  }
  size_t size() const { return bytes_; }
  const MemoryLocation& location() const { return loc_; }
  explicit operator bool() const { return p_ != nullptr; }

 private:
  void* p_ = nullptr;
  size_t bytes_ = 0;
  MemoryLocation loc_;
  std::function<void(void*, size_t)> release_;
};

// Hands out buffers at one location. memtier implements NUMA-bound allocators, the
// accelerators implement device memory; `host_allocator()` is plain page-aligned memory.
class BufferAllocator {
 public:
  virtual ~BufferAllocator() = default;
  // Throws hb::Error (naming the location, the size and the fix) when it cannot.
  virtual Buffer allocate(size_t bytes) = 0;
  virtual MemoryLocation location() const = 0;
  // Whether the host CPU can dereference the memory (false for GPU device memory).
  virtual bool host_accessible() const { return true; }
  // Whether allocate() hands out zeroed memory (every host allocator here prefaults by zeroing;
  // cudaMalloc does not), so a fresh page block needs no zeroing pass of its own.
  virtual bool zeroes_memory() const { return false; }
  // Copies between host memory and memory of this allocator (cudaMemcpy for device memory).
  virtual void copy_in(void* dst, const void* host_src, size_t bytes);
  virtual void copy_out(void* host_dst, const void* src, size_t bytes);
  // Strided copies: `rows` runs of `width` bytes, `dst_pitch` / `src_pitch` bytes apart (a K
  // column of a page block is d runs of one element). One call per strided transfer, so device
  // memory makes it one 2D copy rather than `rows` blocking copies; the default loops memcpy.
  virtual void copy_in_2d(void* dst, size_t dst_pitch, const void* host_src, size_t src_pitch,
                          size_t width, size_t rows);
  virtual void copy_out_2d(void* host_dst, size_t dst_pitch, const void* src, size_t src_pitch,
                           size_t width, size_t rows);
};

// Page-aligned, prefaulted (zeroed) host memory with no NUMA policy (first touch by the caller's
// thread). Released blocks of 1 MiB and more are kept for the next request of their size (at
// most an eighth of RAM, 4 GiB; a request of another size frees at least its size of them).
std::shared_ptr<BufferAllocator> host_allocator(MemoryLocation loc = {});
// Bytes of released blocks host_allocator holds for reuse (tests and diagnostics).
size_t host_allocator_held_bytes();

}  // namespace hb
