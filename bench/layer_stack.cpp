#include "bench/layer_stack.h"

#include <utility>

#include "core/error.h"

namespace hb::bench {

uint64_t layer_workload_seed(uint64_t seed, int layer) {
  // The golden-ratio increment: consecutive layers land 2^64 / phi apart, far from the small
  // per-sequence offsets, and wrap-around keeps them distinct for every layer count allowed.
  return seed + static_cast<uint64_t>(layer) * 0x9E3779B97F4A7C15ull;
}

LayerStack::LayerStack(const LayerFactory& make, std::vector<std::span<const Workload>> others)
    : others_(std::move(others)) {
  const int n = static_cast<int>(others_.size()) + 1;
  layers_.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) layers_.push_back(Layer{nullptr, make(i), {}});
}

LayerStack::~LayerStack() {
  // A step that threw may have left work queued over the layers' buffers.
  if (accelerator_) {
    try {
      accelerator_->synchronize();
    } catch (...) {  // an accelerator error was reported already; nothing left to protect
    }
  }
}

PlanResult LayerStack::plan(const Problem& problem, const Platform& platform) {
  accelerator_ = platform.accelerator;
  const int n = layers();
  // The runner gave the stack N per-layer budgets; each layer plans on its own, as a one-layer
  // point does on the whole accelerator.
  const int64_t per_layer = accelerator_->info().capacity_bytes / n;
  PlanResult first;
  for (int i = 0; i < n; ++i) {
    Layer& l = layers_[static_cast<size_t>(i)];
    l.problem = problem;
    if (i > 0) {
      l.problem.workloads = others_[static_cast<size_t>(i - 1)];
      if (static_cast<int>(l.problem.workloads.size()) != problem.batch)
        throw Error("layer stack: layer " + std::to_string(i) + " has " +
                        std::to_string(l.problem.workloads.size()) + " workloads for a batch of " +
                        std::to_string(problem.batch),
                    {}, kExitFailure);
    }
    l.accelerator = std::make_unique<AcceleratorShare>(
        *accelerator_, accelerator_->bytes_in_use() + per_layer, carry_);
    Platform own = platform;
    own.accelerator = l.accelerator.get();
    PlanResult r = l.strategy->plan(l.problem, own);
    if (r.status != PlanStatus::ok) {
      r.reason = "layer " + std::to_string(i) + " of " + std::to_string(n) + ": " + r.reason;
      return r;
    }
    if (i == 0) first = std::move(r);
  }
  first.parameters["layers"] = std::to_string(n);
  return first;
}

void LayerStack::load() {
  for (auto& l : layers_) l.strategy->load();
}

void LayerStack::prepare_step(int s) {
  for (auto& l : layers_) l.strategy->prepare_step(s);
}

void LayerStack::step(int s, StepResult& out) {
  for (size_t i = 0; i < layers_.size(); ++i) {
    StepResult r;
    layers_[i].strategy->step(s, r);
    for (const auto& [phase, ns] : r.phase_ns) out.phase_ns[phase] += ns;
    out.traffic += r.traffic;
    if (i == 0) {
      out.o = std::move(r.o);
      out.attended = std::move(r.attended);
    }
  }
}

void LayerStack::fill_attended(int s, StepResult& out) {
  layers_[0].strategy->fill_attended(s, out);  // out holds what layer 0's step left
}

std::vector<MemoryRegion> LayerStack::memory_regions() const {
  std::vector<MemoryRegion> all;
  for (const auto& l : layers_)
    for (auto& r : l.strategy->memory_regions()) all.push_back(std::move(r));
  return all;
}

}  // namespace hb::bench
