#pragma once
// The accelerator backends and their registry (backends()), and the factory that picks one:
// --accelerator auto takes the first usable backend (a GPU when one is usable, else the cpu
// accelerator).
#include <memory>
#include <string>
#include <vector>

#include "core/accelerator.h"
#include "core/copy_link.h"
#include "core/vocabulary.h"

namespace hb {

// Which accelerator a run asks for (AcceleratorKind, core/accelerator.h): `auto` takes a usable
// GPU, else the cpu accelerator.
struct AcceleratorOptions {
  AcceleratorKind kind = AcceleratorKind::auto_select;
  int device = 0;
  int64_t capacity_bytes = 0;  // KV budget; 0 = default (cpu: 2 GiB; cuda: free HBM minus 10%)
  int cpu_threads = 0;         // cpu accelerator worker threads (0 = half the CPUs, at least 1)
};

// Throws hb::Error when the backend asked for is not usable (saying why); auto takes the first
// usable backend of backends().
std::unique_ptr<Accelerator> make_accelerator(const AcceleratorOptions& opts);

// Copy bandwidth of a device, for `probe` and the platform profile: pinned host memory on the
// device's local NUMA node to and from device memory (h2d, d2h) and device to device
// (hbm_copy, bytes read + written per second, as copy benchmarks count it). One GB/s figure per
// repetition of a `bytes` copy, after one untimed warm-up. Empty, with why_not, when the backend
// has no device to probe.
struct AcceleratorLinkSamples {
  CopyLink link = CopyLink::h2d;
  int host_node = -1, device = 0;
  std::vector<double> gbps;
};

// One accelerator backend: a folder of kernels/ (cpu, cuda) whose backend() returns this, plus
// its line in backends() (backend.cpp) and its name in kAcceleratorKinds (core/accelerator.h).
// Callers branch on these capabilities, never on a backend's name.
struct Backend {
  AcceleratorKind kind = AcceleratorKind::cpu;
  const char* device = "";  // what it runs on, for messages: "GPU", "CPU"
  bool emulated = false;    // its figures are emulated (CPU threads playing a GPU)
  // GEMM library workspace one LayerWork allocates from accelerator memory (cuBLAS's; 0 for the
  // cpu accelerator's GEMV: counting it there would hand its KV memory it never has to share).
  int64_t layer_workspace_bytes = 0;
  // Whether this binary and machine can make one on `device` (why_not says why not).
  bool (*usable)(int device, std::string* why_not) = nullptr;
  std::unique_ptr<Accelerator> (*make)(const AcceleratorOptions& opts) = nullptr;
  // The host NUMA node of each device index this process sees, in the order --device counts;
  // -1 where unknown; empty where the backend has no devices of its own (or none is usable).
  std::vector<int> (*numa_nodes)() = nullptr;
  // measure_accelerator_links for this backend.
  std::vector<AcceleratorLinkSamples> (*link_probe)(int device, size_t bytes, int reps,
                                                    std::string* why_not) = nullptr;
  const char* name() const { return kAcceleratorKinds.name(kind); }
};

// Every backend, in the order --accelerator auto tries them (real devices first, the cpu
// accelerator last); one per AcceleratorKind but auto_select.
const std::vector<Backend>& backends();
// The backend of `kind`; auto_select resolves first: the first usable one on `device`.
const Backend& backend(AcceleratorKind kind, int device = 0);

std::vector<AcceleratorLinkSamples> measure_accelerator_links(int device, size_t bytes, int reps,
                                                              std::string* why_not = nullptr);

// The host NUMA node of each CUDA device index this process sees, in CUDA's device order
// (what --device counts; CUDA_VISIBLE_DEVICES, UUIDs included, and CUDA_DEVICE_ORDER already
// applied), -1 where unknown. Empty without a usable GPU or in a CPU-only build.
std::vector<int> cuda_device_numa_nodes();

// Whether a CUDA device is usable; `why_not` says why not (CPU-only build, no driver, no
// device). Any CUDA error counts as "no GPU".
bool cuda_available(std::string* why_not = nullptr);

}  // namespace hb
