#include "kernels/cuda/page_table_cache.h"

#include <algorithm>
#include <cstddef>
#include <string>

#include "core/error.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/launch_plan.h"

namespace hb::cuda {

static_assert(sizeof(DevPage) == sizeof(PageRef) && offsetof(PageRef, k) == offsetof(DevPage, k) &&
                  offsetof(PageRef, v) == offsetof(DevPage, v),
              "DevPage must mirror PageRef byte for byte: tables are uploaded as-is");

namespace {
// More distinct tables than this (layers x sequences x heads of one run is far less) means
// tables are being recreated; old mirrors are then dropped.
constexpr size_t kMaxMirrors = 1 << 14;
constexpr uint64_t kIdleOps = 1024;
}  // namespace

PageTableCache::~PageTableCache() {
  for (auto& [host, m] : mirrors_)
    if (m.dev) cudaFreeAsync(m.dev, ctx_.stream);
  cudaGetLastError();
}

void PageTableCache::begin_op() {
  ++op_;
  if (mirrors_.size() <= kMaxMirrors) return;
  for (auto it = mirrors_.begin(); it != mirrors_.end();) {
    if (it->second.last_op + kIdleOps < op_) {
      if (it->second.dev) cudaFreeAsync(it->second.dev, ctx_.stream);  // after queued readers
      it = mirrors_.erase(it);
    } else {
      ++it;
    }
  }
}

const DevPage* PageTableCache::get(const PageRef* host, int64_t n, UploadRing& ring) {
  if (n <= 0 || host == nullptr) return nullptr;
  Mirror& m = mirrors_[host];
  m.last_op = op_;
  if (n > m.capacity) {
    const int64_t cap = std::max<int64_t>({n, 2 * m.capacity, 64});
    void* p = nullptr;
    ctx_.check_scratch(static_cast<size_t>(cap) * sizeof(DevPage), "page table mirror");
    HB_CUDA_CHECK(cudaMallocFromPoolAsync(&p, static_cast<size_t>(cap) * sizeof(DevPage),
                                          ctx_.scratch_pool, ctx_.stream),
                  "page table of " + std::to_string(n) + " pages");
    if (m.dev) cudaFreeAsync(m.dev, ctx_.stream);
    m.dev = static_cast<DevPage*>(p);
    m.capacity = cap;
    m.shadow.clear();  // the new copy holds nothing yet
  }
  const auto [lo, hi] =
      changed_range(m.shadow.data(), static_cast<int64_t>(m.shadow.size()), host, n);
  if (lo < hi) {
    uintptr_t bits = 0;
    for (int64_t i = lo; i < hi; ++i)
      bits |= reinterpret_cast<uintptr_t>(host[i].k) | reinterpret_cast<uintptr_t>(host[i].v);
    if (bits & 15)
      throw Error(
          "a KV page block is not 16-byte aligned; the CUDA kernels copy blocks in 16-byte units",
          "allocate page arenas from the accelerator's allocators (their blocks are aligned)",
          kExitFailure);
    ring.upload(m.dev + lo, host + lo, static_cast<size_t>(hi - lo) * sizeof(DevPage), ctx_.stream);
    if (static_cast<int64_t>(m.shadow.size()) < hi) m.shadow.resize(static_cast<size_t>(hi));
    std::copy(host + lo, host + hi, m.shadow.begin() + lo);
  }
  return m.dev;
}

}  // namespace hb::cuda
