#pragma once
// The cpu accelerator: CPU threads playing the GPU's role so every strategy runs end to end on
// machines without a GPU. It has a memory budget (like HBM capacity), an in-order operation
// queue served by its own thread (like a CUDA stream, so host-side work really overlaps), and
// its own worker pool separate from the host threads. Its figures are labelled emulated.
#include <memory>

#include "core/accelerator.h"

namespace hb::cpu {

// capacity_bytes 0 = 2 GiB; threads 0 = half the allowed CPUs (at least 1).
// share_layer_weights, run_layer_gemms: AcceleratorOptions' fields of those names.
std::unique_ptr<Accelerator> make_cpu_accelerator(int64_t capacity_bytes, int threads,
                                                  bool share_layer_weights = false,
                                                  bool run_layer_gemms = true);

}  // namespace hb::cpu
