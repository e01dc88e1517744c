#pragma once
// The cpu accelerator's decoder-layer GEMMs (core/layer_work.h) on its own threads, with the
// engine's GEMV (layer_gemv.h). Emulated like the rest of the cpu accelerator.
#include <functional>
#include <memory>

#include "core/layer_work.h"
#include "core/memory.h"
#include "core/thread_pool.h"

namespace hb::cpu {

// `enqueue` puts an operation on the accelerator's queue; `memory` is its capacity-budgeted
// memory (weights and activations are allocated there now).
std::unique_ptr<LayerWork> make_cpu_layer_work(std::function<void(std::function<void()>)> enqueue,
                                               ThreadPool& pool, BufferAllocator& memory,
                                               const ModelPreset& model, int max_batch,
                                               uint64_t seed = 1);

}  // namespace hb::cpu
