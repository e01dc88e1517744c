#pragma once
// The cpu accelerator's decoder-layer GEMMs (core/layer_work.h) on its own threads, with the
// engine's GEMV (layer_gemv.h). Emulated like the rest of the cpu accelerator.
#include <functional>
#include <memory>

#include "core/layer_work.h"
#include "core/memory.h"
#include "core/thread_pool.h"

namespace hb::cpu {

// Charges a number of bytes against an accelerator's budget without memory (CapacityError when
// they do not fit); the returned token gives them back.
using LayerCharge = std::function<Buffer(size_t bytes)>;

// `enqueue` puts an operation on the accelerator's queue; `memory` is its capacity-budgeted
// memory (weights and activations are allocated there now). With `charge`, the weights are one
// filled copy shared by every layer work alive with the same shapes and seed (their values are
// a fixed function of both), each layer work charging its budget for them with `charge`
// instead of allocating and filling its own. With
// `compute` false the GEMMs are queued as nothing (make_cpu_accelerator's run_layer_gemms) and the
// weights are only charged (`charge` required), never allocated or filled.
std::unique_ptr<LayerWork> make_cpu_layer_work(std::function<void(std::function<void()>)> enqueue,
                                               ThreadPool& pool, BufferAllocator& memory,
                                               const ModelPreset& model, int max_batch,
                                               uint64_t seed = 1, LayerCharge charge = {},
                                               bool compute = true);

}  // namespace hb::cpu
