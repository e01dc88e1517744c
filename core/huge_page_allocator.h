#pragma once
// An allocator for the process's largest plain vectors (a workload's KV, the reference's
// probabilities, a prefill's logits): a request of kMinBytes or more is its own anonymous
// mapping, 2 MiB aligned and marked MADV_HUGEPAGE, so first touch faults it in 2 MiB at a time,
// and a released one is kept (bounded) for the next request of its size. Why: these buffers are
// hundreds of MiB each, made afresh per unit and freed after it; faulting them in 4 KiB pages
// was a fifth of a long-context model run on a VM (PERFORMANCE-LOG.md, 2026-12-06). Under THP
// "never" the advice is ignored. Smaller requests go to std::allocator. Values are initialised
// as with std::allocator.
#include <cstddef>
#include <memory>
#include <new>

namespace hb {

namespace huge_pages {
inline constexpr size_t kMinBytes = size_t{4} << 20;
// A mapping of at least `bytes` (2 MiB aligned, huge pages advised); throws std::bad_alloc.
void* map(size_t bytes);
void unmap(void* p, size_t bytes);
}  // namespace huge_pages

template <class T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() noexcept = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}

  T* allocate(size_t n) {
    if (n > static_cast<size_t>(-1) / sizeof(T)) throw std::bad_alloc();
    const size_t bytes = n * sizeof(T);
    if (bytes < huge_pages::kMinBytes) return std::allocator<T>().allocate(n);
    return static_cast<T*>(huge_pages::map(bytes));
  }
  void deallocate(T* p, size_t n) noexcept {
    if (n * sizeof(T) < huge_pages::kMinBytes) return std::allocator<T>().deallocate(p, n);
    huge_pages::unmap(p, n * sizeof(T));
  }
  template <class U>
  bool operator==(const HugePageAllocator<U>&) const noexcept {
    return true;
  }
};

}  // namespace hb
