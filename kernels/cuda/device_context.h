#pragma once
// The CUDA objects one accelerator owns, shared (by shared_ptr) with the allocators it hands
// out, so buffers and arenas may outlive the accelerator object without dangling streams.
#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>

#include "kernels/cuda/device_info.h"

namespace hb::cuda {

struct DeviceContext {
  explicit DeviceContext(int device);
  ~DeviceContext();
  DeviceContext(const DeviceContext&) = delete;
  DeviceContext& operator=(const DeviceContext&) = delete;

  // Makes this device current on the calling thread (cheap when it already is).
  void activate() const;

  int device;
  DeviceInfo info;
  cudaStream_t stream = nullptr;         // the accelerator's in-order queue
  cudaStream_t copy_stream = nullptr;    // H2D copies that overlap compute (streaming path)
  cudaMemPool_t scratch_pool = nullptr;  // stream-ordered scratch: descriptors, partials, tables
  std::atomic<int64_t> budget_used{0};   // bytes of KV-budget allocations alive
  int64_t capacity = INT64_MAX;          // the accelerator's budget (set once, at creation)

  // Device memory the scratch pool holds (descriptors, partials, page-table mirrors; freed
  // scratch stays in the pool), counted against the capacity with the budget allocations.
  int64_t scratch_reserved() const;
  // budget_used + scratch_reserved(): what the accelerator reports as in use.
  int64_t bytes_in_use() const { return budget_used.load() + scratch_reserved(); }
  // Throws hb::CapacityError when `bytes` more scratch would take the accelerator past its
  // capacity (scratch reuses freed pool memory first, so only growth beyond it counts).
  void check_scratch(size_t bytes, const char* what) const;
};

// Stream-ordered scratch memory from the context's pool: allocated on `stream` now, freed on
// `stream` when destroyed (after everything queued so far), so no synchronisation is needed.
class Scratch {
 public:
  Scratch() = default;
  Scratch(const DeviceContext& ctx, size_t bytes, const char* what);
  ~Scratch();
  Scratch(Scratch&& o) noexcept : p_(o.p_), stream_(o.stream_) { o.p_ = nullptr; }
  Scratch& operator=(Scratch&& o) noexcept;
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  template <class T>
  T* as() const {
    return static_cast<T*>(p_);
  }
  void* get() const { return p_; }

 private:
  void* p_ = nullptr;
  cudaStream_t stream_ = nullptr;
};

}  // namespace hb::cuda
