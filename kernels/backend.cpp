#include "kernels/backend.h"

#include "core/error.h"
#include "kernels/cpu/cpu_backend.h"
#ifdef HB_WITH_CUDA
#include "kernels/cuda/cuda_backend.h"
#endif

namespace hb {

namespace {

#ifndef HB_WITH_CUDA
// The cuda backend of a binary built without it: listed, so --accelerator cuda is known and
// says why it cannot run, and reports naming it still load.
bool not_built(int, std::string* why_not) {
  if (why_not) *why_not = "this binary was built without CUDA (HYBRIDBENCH_CUDA=OFF)";
  return false;
}
std::unique_ptr<Accelerator> cannot_make(const AcceleratorOptions&) {
  throw Error("this binary was built without CUDA", "rebuild with -DHYBRIDBENCH_CUDA=ON");
}
std::vector<int> no_nodes() { return {}; }
std::vector<AcceleratorLinkSamples> no_links(int device, size_t, int, std::string* why_not) {
  not_built(device, why_not);
  return {};
}
Backend cuda_not_built() {
  return Backend{AcceleratorKind::cuda, "GPU",    false,   kLayerWorkspaceBytes, not_built,
                 cannot_make,           no_nodes, no_links};
}
#endif

}  // namespace

const std::vector<Backend>& backends() {
  // The registry: one line per backend, in the order auto tries them.
  static const std::vector<Backend> all = {
#ifdef HB_WITH_CUDA
      cuda::backend(),
#else
      cuda_not_built(),
#endif
      cpu::backend(),
  };
  return all;
}

const Backend& backend(AcceleratorKind kind, int device) {
  for (const Backend& b : backends())
    if (kind == AcceleratorKind::auto_select ? b.usable(device, nullptr) : b.kind == kind) return b;
  throw Error(
      std::string("no accelerator backend ") + kAcceleratorKinds.name(kind) + " is registered",
      "add its line to backends() in kernels/backend.cpp");
}

bool cuda_available(std::string* why_not) {
  return backend(AcceleratorKind::cuda).usable(0, why_not);
}

std::vector<int> cuda_device_numa_nodes() { return backend(AcceleratorKind::cuda).numa_nodes(); }

std::vector<AcceleratorLinkSamples> measure_accelerator_links(int device, size_t bytes, int reps,
                                                              std::string* why_not) {
  // The first backend with a device link of its own that is usable here; else why the first
  // such backend is not.
  const Backend* first = nullptr;
  for (const Backend& b : backends()) {
    if (!b.link_probe) continue;
    if (b.usable(device, nullptr)) return b.link_probe(device, bytes, reps, why_not);
    if (!first) first = &b;
  }
  if (first) first->usable(device, why_not);
  return {};
}

std::unique_ptr<Accelerator> make_accelerator(const AcceleratorOptions& o) {
  const Backend& b = backend(o.kind, o.device);
  std::string why;
  if (!b.usable(o.device, &why))
    throw Error(std::string("--accelerator ") + b.name() + " asked for, but no " + b.device +
                    " is usable: " + why,
                std::string("use --accelerator cpu (emulated accelerator) or run on a machine "
                            "with a ") +
                    b.device);
  return b.make(o);
}

}  // namespace hb
