#include "kernels/cpu/cpu_backend.h"

#include "kernels/cpu/cpu_accelerator.h"

namespace hb::cpu {

Backend backend() {
  Backend b;
  b.kind = AcceleratorKind::cpu;
  b.device = "CPU";
  b.emulated = true;
  b.layer_workspace_bytes = 0;
  b.usable = [](int, std::string*) { return true; };
  b.make = [](const AcceleratorOptions& o) {
    return make_cpu_accelerator(o.capacity_bytes, o.cpu_threads);
  };
  b.numa_nodes = [] { return std::vector<int>{}; };
  b.link_probe = nullptr;  // host memory is its device memory: no link between them
  return b;
}

}  // namespace hb::cpu
