#include "kernels/cuda/cuda_check.h"

#include "core/error.h"

namespace hb::cuda {

void throw_cuda_error(cudaError_t err, const char* call, const std::string& context) {
  std::string msg = std::string("CUDA error in ") + call;
  if (!context.empty()) msg += " (" + context + ")";
  msg += ": " + std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
  // Out of memory is a capacity problem (CapacityError) the runner reports as status "oom".
  if (err == cudaErrorMemoryAllocation)
    throw CapacityError("accelerator capacity exhausted: " + msg,
                        "lower --accelerator-memory, the batch or the sequence length",
                        kExitFailure);
  // Errors from a kernel's execution are sticky: the context is unusable afterwards.
  const bool sticky = err == cudaErrorIllegalAddress || err == cudaErrorLaunchFailure ||
                      err == cudaErrorMisalignedAddress || err == cudaErrorIllegalInstruction;
  cudaGetLastError();  // clear a non-sticky error so the next call is not blamed for it
  throw Error(
      msg,
      sticky ? "a kernel faulted; rerun under compute-sanitizer to find the access, and report it"
             : "check the GPU with nvidia-smi, or run with --accelerator cpu",
      kExitFailure);
}

}  // namespace hb::cuda
