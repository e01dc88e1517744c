#pragma once
// The work of a decode step outside the decoder layers, timed on the run's accelerator for the
// whole-model ITL (reports/whole_model.h, model/whole_model.h). What dominates it is the LM
// head: a GEMV of the batch's hidden rows over hidden x vocab weights (2.1 GB for Llama 3.1 70B,
// more than one of its layers). The accelerator's layer GEMMs (core/layer_work.h) time it as a
// weight-equivalent stand-in, a layer whose ungated FFN is hidden x vocab/2 then vocab/2 x hidden:
// the same weight bytes and flops as the LM head, streamed by the same GEMM kernels (cuBLAS on
// CUDA, the engine's GEMV on the cpu accelerator), plus one kernel launch and a vocab/2-wide
// activation between them. The embedding row gather, the final norm and sampling (under 1% of
// the LM head's bytes at batch 8) are not timed.
#include <map>
#include <string>

#include "core/model_presets.h"
#include "kernels/backend.h"
#include "reports/report.h"

namespace hb::bench {

struct OutsideLayersTiming {
  double ns = 0;                                                   // median of the timed repeats
  reports::Provenance provenance = reports::Provenance::measured;  // emulated on the cpu kind
};

// The stand-in layer: ungated FFN of width ceil(vocab / 2), a 1-head attention of head_dim 1.
ModelPreset lm_head_stand_in(const ModelPreset& model);

// Times the LM-head stand-in at each batch on a fresh accelerator made as `options` say (its
// capacity set to what the stand-in needs): one untimed run, then the median of `repeats`
// enqueue + synchronize wall times per batch. Throws hb::Error when the accelerator cannot be
// had or the weights do not fit it (CapacityError).
std::map<int, OutsideLayersTiming> time_outside_layers(const AcceleratorOptions& options,
                                                       const ModelPreset& model,
                                                       const std::vector<int>& batches,
                                                       int repeats = 5);

}  // namespace hb::bench
