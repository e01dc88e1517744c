#pragma once
// Exact accounting of what a strategy's decode step moved and computed. Strategies add to it
// as they issue work (counted from the sizes they ask for, not estimated afterwards), so tests
// can check it against hand-computed values and the projection model can price it.
#include <array>
#include <cstdint>

#include "core/memory.h"

namespace hb {

enum class Processor : uint8_t { cpu = 0, accelerator = 1 };
inline const char* processor_name(Processor p) {
  return p == Processor::cpu ? "cpu" : "accelerator";
}
inline constexpr int kMemoryKinds = 6;

struct Traffic {
  // bytes_read[processor][memory kind]: bytes the processor read from memory of that kind.
  std::array<std::array<int64_t, kMemoryKinds>, 2> bytes_read{};
  std::array<std::array<int64_t, kMemoryKinds>, 2> bytes_written{};
  int64_t h2d_bytes = 0;  // host -> accelerator link
  int64_t d2h_bytes = 0;  // accelerator -> host link
  double cpu_flops = 0, accelerator_flops = 0;
  int64_t kernel_launches = 0;  // accelerator kernels (or cpu-accelerator tasks) issued
  int64_t syncs = 0;            // host waits on the accelerator
  // Elements scanned by selection (top-k, argmin, threshold counts) per processor: branchy
  // compare-and-move work that neither the bytes nor the flops above price (model
  // charges it at a measured rate). The scores' bytes are counted as reads as usual.
  std::array<double, 2> select_elements{};
  // Of bytes_read[accelerator][accelerator]: the layer's weights its GEMMs stream (run --scope
  // layer). Decode GEMMs are bound by these bytes at a rate of their own, which model
  // prices apart from attention's (accelerator.gemm_gbps) where the profile has it.
  int64_t weight_bytes = 0;

  void read(Processor p, MemoryKind k, int64_t bytes) { bytes_read[int(p)][int(k)] += bytes; }
  void write(Processor p, MemoryKind k, int64_t bytes) { bytes_written[int(p)][int(k)] += bytes; }
  void select(Processor p, double elements) { select_elements[int(p)] += elements; }
  int64_t total_read(Processor p) const {
    int64_t s = 0;
    for (auto b : bytes_read[int(p)]) s += b;
    return s;
  }
  Traffic& operator+=(const Traffic& o);
  Traffic scaled(double f) const;  // e.g. per-step average of a sum
  // One sequence's step as the step of `batch` such sequences in `microbatches` micro-batches:
  // what each sequence moves and computes (bytes, flops, selection) times batch; the weights,
  // the kernel launches and the syncs once per micro-batch (a batched kernel is one launch, and
  // each micro-batch's GEMMs read the weights again), except `step_syncs` of the syncs, which
  // the step has once whatever its micro-batches (a layer's wait for its tail). Model mode
  // executes one sequence of a batch and prices the batch with this (model/sampled_batch.cpp).
  Traffic for_batch(int batch, int microbatches = 1, int64_t step_syncs = 0) const;
  bool operator==(const Traffic&) const = default;
};

}  // namespace hb
