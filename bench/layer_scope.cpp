#include "bench/layer_scope.h"

#include <algorithm>
#include <utility>

#include "core/error.h"
#include "core/phase_names.h"
#include "core/timer.h"

namespace hb::bench {

bool gains_from_microbatches(const OverlapStructure& overlap) {
  for (const auto& stage : overlap.stages)
    if (std::find(stage.begin(), stage.end(), Resource::cpu) != stage.end() &&
        std::find(stage.begin(), stage.end(), Resource::accelerator) != stage.end())
      return true;
  return false;
}

int resolve_microbatches(int requested, int batch, bool gains) {
  const int n = requested > 0 ? requested : (batch >= 2 && gains ? 2 : 1);
  return std::clamp(n, 1, std::max(batch, 1));
}

LayerScope::LayerScope(Factory make, const ModelPreset& model, int microbatches, StackPlace place)
    : make_(std::move(make)), model_(model), requested_microbatches_(microbatches), place_(place) {
  parts_.push_back(Part{make_(), nullptr, {}, 0, {}});
}

LayerScope::~LayerScope() {
  // Queued layer work points into layer_'s buffers: let it finish before they go.
  if (accelerator_ && layer_) {
    try {
      accelerator_->synchronize();
    } catch (...) {  // an accelerator error was reported already; nothing left to protect
    }
  }
}

PlanResult LayerScope::plan(const Problem& problem, const Platform& platform) {
  accelerator_ = platform.accelerator;
  const int n = resolve_microbatches(requested_microbatches_, problem.batch,
                                     gains_from_microbatches(parts_[0].strategy->overlap()));
  const int base = problem.batch / n, extra = problem.batch % n;
  // Weights first: a deployment holds them before any KV (CapacityError -> status oom).
  layer_ = accelerator_->make_layer_work(model_, base + (extra ? 1 : 0), place_.layer);
  const int64_t in_use = accelerator_->bytes_in_use();
  const int64_t share = std::max<int64_t>(accelerator_->info().capacity_bytes - in_use, 0) / n;
  out_per_sequence_ = int64_t{problem.shape.q_heads} * problem.shape.head_dim;
  PlanResult first;
  parts_.reserve(n);  // strategies keep a pointer to their part's Problem: no reallocation
  for (int i = 0, seq = 0; i < n; ++i) {
    if (i == static_cast<int>(parts_.size())) parts_.push_back(Part{make_(), nullptr, {}, 0, {}});
    Part& p = parts_[i];
    const int size = base + (i < extra ? 1 : 0);
    p.first = seq;
    p.problem = problem;
    p.problem.batch = size;
    p.problem.workloads = problem.workloads.subspan(seq, size);
    p.accelerator = std::make_unique<AcceleratorShare>(*accelerator_, in_use + share, carry_);
    Platform own = platform;
    own.accelerator = p.accelerator.get();
    PlanResult r = p.strategy->plan(p.problem, own);
    if (r.status != PlanStatus::ok || i == 0) first = std::move(r);
    if (first.status != PlanStatus::ok) return first;
    seq += size;
  }
  first.parameters["scope"] = to_string(Scope::layer);
  first.parameters["microbatches"] = std::to_string(n);
  first.parameters["layer_weight_bytes"] = std::to_string(layer_->weight_bytes());
  if (n > 1)
    first.parameters["microbatch_note"] = "per-micro-batch parameters shown are micro-batch 0's (" +
                                          std::to_string(parts_[0].problem.batch) + " sequences)";
  return first;
}

void LayerScope::load() {
  for (auto& p : parts_) p.strategy->load();
}

void LayerScope::prepare_step(int s) {
  for (auto& p : parts_) p.strategy->prepare_step(s);
}

void LayerScope::step(int s, StepResult& out) {
  const int batch = parts_.back().first + parts_.back().problem.batch;
  out.o.assign(static_cast<size_t>(batch) * out_per_sequence_, 0.0f);
  layer_->enqueue_qkv(parts_[0].problem.batch);
  for (size_t i = 0; i < parts_.size(); ++i) {
    Part& p = parts_[i];
    // One part writes the scope's result itself: its output, phases and traffic are the
    // scope's so far, and its attended lists (1 MiB a row at 128k) are neither copied nor
    // re-faulted (the runner keeps `out`'s memory).
    StepResult own;
    StepResult& r = parts_.size() == 1 ? out : own;
    p.strategy->step(s, r);
    p.accelerator->flush();  // a strategy that never touched the accelerator
    if (&r != &out) {
      std::copy(r.o.begin(), r.o.end(), out.o.begin() + p.first * out_per_sequence_);
      p.attended = std::move(r.attended);
      for (const auto& [phase, ns] : r.phase_ns) out.phase_ns[phase] += ns;
      out.traffic += r.traffic;
    }
    const int rows = p.problem.batch;
    if (i + 1 < parts_.size()) {
      layer_->enqueue_qkv(parts_[i + 1].problem.batch);  // needs nothing of this micro-batch
      parts_[i + 1].accelerator->defer([this, rows] {
        layer_->enqueue_out_proj(rows);
        layer_->enqueue_ffn(rows);
      });
    } else {
      layer_->enqueue_out_proj(rows);
      layer_->enqueue_ffn(rows);
    }
  }
  // Inside a stack the next layer's queue order is the wait (StackPlace); its strategy's first
  // synchronize then counts this tail's busy time, as the carry would have.
  if (place_.waits_for_tail) {
    const int64_t wait_start = now_ns();
    carry_->ns += accelerator_->synchronize();
    out.phase_ns[phase::kLayerTail] += now_ns() - wait_start;
    out.traffic.syncs += 1;
  }
  add_layer_traffic(out);
  if (parts_.size() > 1) assemble_attended(s, out);
}

void LayerScope::fill_attended(int s, StepResult& out) {
  if (parts_.size() == 1) {  // out.attended holds what its step left (step())
    parts_[0].strategy->fill_attended(s, out);
    return;
  }
  for (auto& p : parts_) {
    StepResult r;
    r.attended = std::move(p.attended);
    p.strategy->fill_attended(s, r);
    p.attended = std::move(r.attended);
  }
  assemble_attended(s, out);
}

void LayerScope::assemble_attended(int s, StepResult& out) const {
  out.attended.clear();
  bool any = false;
  for (const auto& p : parts_) any = any || !p.attended.empty();
  if (!any) return;
  const int q_heads = parts_[0].problem.shape.q_heads;
  for (const auto& p : parts_) {
    if (!p.attended.empty()) {
      out.attended.insert(out.attended.end(), p.attended.begin(), p.attended.end());
      continue;
    }
    std::vector<int64_t> all(static_cast<size_t>(p.problem.context_at(s)));
    for (size_t t = 0; t < all.size(); ++t) all[t] = static_cast<int64_t>(t);
    for (int row = 0; row < p.problem.batch * q_heads; ++row) out.attended.push_back(all);
  }
}

void LayerScope::add_layer_traffic(StepResult& out) const {
  const LayerDims d = layer_dims(model_);
  const auto n = static_cast<int64_t>(parts_.size());
  const int batch = static_cast<int>(parts_.back().first + parts_.back().problem.batch);
  // Each micro-batch's GEMMs read all the weights again; activations are a rounding error.
  out.traffic.read(Processor::accelerator, MemoryKind::accelerator, n * layer_->weight_bytes());
  out.traffic.weight_bytes += n * layer_->weight_bytes();
  out.traffic.accelerator_flops += d.flops(batch);
  out.traffic.kernel_launches += n * (d.gated ? 5 : 4);
}

std::vector<MemoryRegion> LayerScope::memory_regions() const {
  std::vector<MemoryRegion> all;
  for (const auto& p : parts_)
    for (auto& r : p.strategy->memory_regions()) all.push_back(std::move(r));
  return all;
}

std::vector<std::map<std::string, double>> LayerScope::trajectory() const {
  return parts_[0].strategy->trajectory();
}

}  // namespace hb::bench
