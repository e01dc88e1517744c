// The CUDA backend's line in the backend registry (kernels/backend.h).
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/device_info.h"

namespace hb::cuda {

Backend backend() {
  Backend b;
  b.kind = AcceleratorKind::cuda;
  b.device = "GPU";
  b.emulated = false;
  b.layer_workspace_bytes = kLayerWorkspaceBytes;  // cuBLAS's (layer_gemms.cu)
  b.usable = device_usable;
  b.make = [](const AcceleratorOptions& o) -> std::unique_ptr<Accelerator> {
    return make_cuda_accelerator(o.device, o.capacity_bytes);
  };
  b.numa_nodes = device_numa_nodes;
  b.link_probe = [](int device, size_t bytes, int reps, std::string*) {
    return measure_links(device, bytes, reps);
  };
  return b;
}

}  // namespace hb::cuda
