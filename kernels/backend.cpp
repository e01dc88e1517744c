#include "kernels/backend.h"

#include "core/error.h"
#include "kernels/cpu/cpu_accelerator.h"
#ifdef HB_WITH_CUDA
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/device_info.h"
#endif

namespace hb {

bool cuda_available(std::string* why_not) {
#ifdef HB_WITH_CUDA
  return cuda::device_usable(0, why_not);
#else
  if (why_not) *why_not = "this binary was built without CUDA (HYBRIDBENCH_CUDA=OFF)";
  return false;
#endif
}

std::vector<int> cuda_device_numa_nodes() {
#ifdef HB_WITH_CUDA
  return cuda::device_numa_nodes();
#else
  return {};
#endif
}

std::vector<AcceleratorLinkSamples> measure_accelerator_links(int device, size_t bytes, int reps,
                                                              std::string* why_not) {
#ifdef HB_WITH_CUDA
  if (!cuda::device_usable(device, why_not)) return {};
  return cuda::measure_links(device, bytes, reps);
#else
  cuda_available(why_not);
  (void)device, (void)bytes, (void)reps;
  return {};
#endif
}

std::unique_ptr<Accelerator> make_accelerator(const AcceleratorOptions& o) {
  if (o.kind == AcceleratorKind::cpu)
    return cpu::make_cpu_accelerator(o.capacity_bytes, o.cpu_threads, o.share_layer_weights,
                                     o.run_layer_gemms);
  std::string why;
#ifdef HB_WITH_CUDA
  if (cuda::device_usable(o.device, &why))
    return cuda::make_cuda_accelerator(o.device, o.capacity_bytes);
#else
  cuda_available(&why);
#endif
  if (o.kind == AcceleratorKind::auto_select)
    return cpu::make_cpu_accelerator(o.capacity_bytes, o.cpu_threads, o.share_layer_weights,
                                     o.run_layer_gemms);
  throw Error("--accelerator cuda asked for, but no GPU is usable: " + why,
              "use --accelerator cpu (emulated accelerator) or run on a machine with a GPU");
}

}  // namespace hb
