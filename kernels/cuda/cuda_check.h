#pragma once
// Error checking for every CUDA runtime call: a failure becomes hb::Error naming the call, what
// it was doing (op and shape) and the CUDA message, with exit code kExitFailure. The context
// expression is evaluated only on failure, so building it costs nothing on the hot path.
#include <cuda_runtime.h>

#include <string>

namespace hb::cuda {

[[noreturn]] void throw_cuda_error(cudaError_t err, const char* call, const std::string& context);

}  // namespace hb::cuda

#define HB_CUDA_CHECK(call, context)                                                               \
  do {                                                                                             \
    const cudaError_t hb_cuda_err_ = (call);                                                       \
    if (hb_cuda_err_ != cudaSuccess) ::hb::cuda::throw_cuda_error(hb_cuda_err_, #call, (context)); \
  } while (0)

// After a kernel launch: launch-configuration errors surface here, execution errors at the
// next synchronize.
#define HB_CUDA_CHECK_LAUNCH(kernel_name, context) \
  HB_CUDA_CHECK(cudaGetLastError(), std::string(kernel_name) + ": " + (context))
