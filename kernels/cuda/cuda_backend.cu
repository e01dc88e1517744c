#include "kernels/cuda/cuda_backend.h"

#include <cuda_runtime.h>

#include "core/error.h"

namespace hb::cuda {

bool device_usable(int device, std::string* why_not) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    if (why_not) *why_not = std::string("cudaGetDeviceCount failed: ") + cudaGetErrorString(err);
    cudaGetLastError();  // clear the sticky error so later calls are not confused
    return false;
  }
  if (count <= device || device < 0) {
    if (why_not)
      *why_not = "no CUDA device " + std::to_string(device) + " (" + std::to_string(count) +
                 " device(s) present)";
    return false;
  }
  return true;
}

}  // namespace hb::cuda
