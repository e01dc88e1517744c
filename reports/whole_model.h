#pragma once
// The whole model's decode figures of a point (Point::whole_model), from its layer step: the
// arithmetic only, so it is tested against hand-computed values in one place. What supplies the
// inputs (the work outside the layers, a platform's price and power) is model/whole_model.h.
#include <optional>
#include <string>

#include "reports/report.h"

namespace hb::reports {

// One accelerator's share of what its node costs per hour (USD) or draws (W): the value and
// how it was derived with its sources, or no value and why (which input is missing and how to
// give it).
struct AcceleratorShare {
  std::optional<double> value;
  std::string basis;  // with a value: its derivation and sources; without: the blank's reason
  static AcceleratorShare missing(std::string reason) { return {std::nullopt, std::move(reason)}; }
};

struct WholeModelInputs {
  int layers = 0;
  double layer_step_ns = 0;  // > 0
  int batch = 1;
  double outside_layers_ns = 0;  // >= 0
  Provenance outside_layers_provenance = Provenance::modeled;
  AcceleratorShare usd_per_hour;  // the accelerator's share of its node's price per hour
  AcceleratorShare watts;         // the accelerator's share of its node's power
  std::string caveat;             // WholeModel::caveat
  int gpus = 1;                   // GPUs one replica spans (tensor parallelism)
  int gpus_per_node = 0;          // 0: unknown (no per-node rate)
};

// ITL = layers x layer_step_ns + outside_layers_ns; tokens/s = batch / ITL; per user 1 / ITL;
// cost per million tokens = usd_per_hour x gpus / (tokens/s x 3600) x 1e6; tokens/s per W =
// tokens/s / (watts x gpus); per GPU tokens/s / gpus, per node that x gpus_per_node. A missing
// share gives a null figure with its reason. Throws hb::Error (a bug in the caller) on inputs out
// of range: layers or batch < 1, a step time <= 0 or non-finite, a negative outside time, a share
// <= 0 or non-finite, a missing share without a reason.
WholeModel make_whole_model(const WholeModelInputs& in);

// The first inconsistency of a block read from a file, "" when there is none: figures out of
// range, an ITL or token rates that do not follow from the rest (relative 1e-6), a null figure
// without its reason.
std::string whole_model_problem(const WholeModel& w, int batch);

}  // namespace hb::reports
