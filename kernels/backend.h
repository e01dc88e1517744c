#pragma once
// Accelerator factory: picks the CUDA backend when a GPU is usable, else the cpu accelerator.
#include <memory>
#include <string>

#include "core/accelerator.h"

namespace hb {

struct AcceleratorOptions {
  std::string kind = "auto";   // auto | cpu | cuda
  int device = 0;
  int64_t capacity_bytes = 0;  // KV budget; 0 = default (cpu: 2 GiB; cuda: free HBM minus 10%)
  int cpu_threads = 0;         // cpu accelerator worker threads (0 = half the CPUs, at least 1)
};

// Throws hb::Error when "cuda" is asked for and no GPU is usable (saying why), or for an
// unknown kind.
std::unique_ptr<Accelerator> make_accelerator(const AcceleratorOptions& opts);

// Whether a CUDA device is usable; `why_not` says why not (CPU-only build, no driver, no
// device). Any CUDA error counts as "no GPU".
bool cuda_available(std::string* why_not = nullptr);

}  // namespace hb
