#pragma once
// Entry points of the CUDA backend used by kernels/backend.cpp (only when built with CUDA):
// backend(), its line in the registry, and what it is made of.
#include <memory>
#include <string>

#include "core/accelerator.h"
#include "kernels/backend.h"

namespace hb::cuda {

// The CUDA backend's registry entry (cuda_registry.cpp).
Backend backend();

// Any CUDA runtime error (e.g. "driver version is insufficient") means "no GPU"; the count
// is not trusted unless the call succeeded.
bool device_usable(int device, std::string* why_not);
// The CUDA accelerator (cuda_accelerator.h has the full interface); capacity_bytes 0 = free
// HBM minus 10%. Throws hb::Error when the device cannot be used.
std::unique_ptr<Accelerator> make_cuda_accelerator(int device, int64_t capacity_bytes);
// Backend::link_probe on a usable device (link_probe.cpp).
std::vector<AcceleratorLinkSamples> measure_links(int device, size_t bytes, int reps);

}  // namespace hb::cuda
