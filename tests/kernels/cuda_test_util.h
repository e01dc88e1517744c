#pragma once
// Shared by the GPU tests (tests/kernels/cuda_*_test.cpp): the skip-or-fail gate, one CUDA
// accelerator per test binary, and device buffers that copy to and from host vectors.
//
// Without a usable GPU every GPU test GTEST_SKIP()s with the reason (CI has nvcc but no GPU).
// scripts/device-check.sh sets HB_REQUIRE_GPU=1, which turns those skips into failures so a
// device check can never pass by skipping.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/backend.h"

#ifdef HB_WITH_CUDA
#include <memory>

#include "kernels/cuda/cuda_accelerator.h"
#endif

namespace hb::test {

inline bool gpu_required() {
  const char* v = std::getenv("HB_REQUIRE_GPU");
  return v && *v && std::strcmp(v, "0") != 0;
}

// Empty when a GPU is usable, else why not.
inline std::string gpu_missing_reason() {
  std::string why;
  return cuda_available(&why) ? std::string() : why;
}

#ifdef HB_WITH_CUDA
// One accelerator for the whole binary (creating a CUDA context per test would dominate).
inline cuda::CudaAccelerator& gpu() {
  static std::unique_ptr<cuda::CudaAccelerator> acc = cuda::make_cuda_device(0, 0);
  return *acc;
}

// A device buffer of n T's, filled from / read back to host vectors (synchronous copies).
template <class T>
struct DevVec {
  Buffer buf;
  size_t n = 0;
  explicit DevVec(size_t count)
      : buf(gpu().memory()->allocate(std::max<size_t>(count, 1) * sizeof(T))), n(count) {}
  explicit DevVec(const std::vector<T>& host) : DevVec(host.size()) { put(host); }
  T* get() const { return buf.as<T>(); }
  void put(const std::vector<T>& host) {
    if (!host.empty()) gpu().memory()->copy_in(buf.data(), host.data(), host.size() * sizeof(T));
  }
  std::vector<T> read() const {
    std::vector<T> out(n);
    if (n) gpu().memory()->copy_out(out.data(), buf.data(), n * sizeof(T));
    return out;
  }
};
#endif

}  // namespace hb::test

// First statement of every GPU test.
#define HB_REQUIRE_GPU_OR_SKIP()                                                           \
  do {                                                                                     \
    const std::string hb_why_ = ::hb::test::gpu_missing_reason();                          \
    if (!hb_why_.empty()) {                                                                \
      if (::hb::test::gpu_required()) FAIL() << "HB_REQUIRE_GPU is set but " << hb_why_;   \
      GTEST_SKIP() << "no usable GPU (" << hb_why_ << "); GPU tests run on a GPU machine"; \
    }                                                                                      \
  } while (0)
