#pragma once
// The cpu accelerator: CPU threads playing the GPU's role so every strategy runs end to end on
// machines without a GPU. It has a memory budget (like HBM capacity), an in-order operation
// queue served by its own thread (like a CUDA stream, so host-side work really overlaps), and
// its own worker pool separate from the host threads. Its figures are labelled emulated.
#include <memory>

#include "core/accelerator.h"

namespace hb::cpu {

// capacity_bytes 0 = 2 GiB; threads 0 = half the allowed CPUs (at least 1).
// run_layer_gemms false: the layer works' GEMMs are queued as nothing and their weights only
// charged to the budget, never allocated or filled (make_cpu_layer_work's `compute`), for a
// caller that makes this accelerator itself and times the GEMMs from their traffic instead (the
// backend registry's always runs them).
std::unique_ptr<Accelerator> make_cpu_accelerator(int64_t capacity_bytes, int threads,
                                                  bool run_layer_gemms = true);

}  // namespace hb::cpu
