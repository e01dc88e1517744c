#pragma once
// Fills each report point's whole-model block (reports/whole_model.h): ITL = layers x the
// point's layer step + the work outside the layers, then tokens/s, $/Mtok and tokens/s per W
// from the platform's economics (model/economics.h). The work outside the layers (embedding,
// final norm, the LM head's GEMV over the vocabulary, sampling) is modeled from the platform's
// roofline in model mode, and timed on the run's accelerator in measure mode
// (bench/outside_layers.h). Points that get no block: not timed, scope attention (a step is
// then no layer), a model without layers or vocabulary (a trace's own shape).
#include <map>
#include <span>
#include <string>
#include <vector>

#include "bench/outside_layers.h"
#include "bench/sweep_spec.h"
#include "core/traffic.h"
#include "model/economics.h"
#include "model/platform_model.h"
#include "model/tensor_parallel.h"
#include "reports/report.h"

namespace hb::model {

// The decode step's work outside the layers as accelerator traffic, for `batch` sequences at the
// preset's element type: the embedding rows (read and written), the final norm (rows and its
// weight read, rows written), the LM head (hidden x vocab weights, Traffic::weight_bytes, fp32
// logits written, 2 x batch x hidden x vocab flops), sampling (the logits read, a token id per
// sequence written and copied to the host), 4 kernel launches and one sync.
Traffic outside_layers_traffic(const ModelPreset& p, int batch);
// Its time on `m`: the roofline's accelerator, transfer and sync times added (serial).
// `d`: one rank's share (model/tensor_parallel.h; default one GPU, fp16).
double modeled_outside_layers_ns(const PlatformModel& m, const ModelPreset& p, int batch,
                                 const Deployment& d = {});

// Why a modeled ITL on `m` is only a lower bound, or "": the model's weights (layers, LM head and
// embedding) exceed the accelerator's usable memory, yet the layer steps stream them from it.
std::string weights_caveat(const PlatformModel& m, const ModelPreset& model,
                           const Deployment& d = {});

// Model mode: each point's platform is axes.extra["platform"], one of `platforms`; the work
// outside the layers is modeled on it and its economics price the point.
// `own_models`: the sweep's models that are not presets (a --model config.json), found first.
void attach_modeled_whole_model(reports::Report& r, const std::vector<PlatformModel>& platforms,
                                std::span<const ModelPreset> own_models = {});

// Measure mode: the economics of the run (its --platform profile's, with the command line's
// overrides; `platform` names the profile, "" without one; `has_cxl_tier`: the node has CXL
// memory to power) and the outside work timed on the run's accelerator per (model, batch) of
// the report's layer-scope points. Interrupted runs get no block (nothing more is timed after
// Ctrl-C).
void attach_measured_whole_model(reports::Report& r, const bench::SweepSpec& spec,
                                 const PlatformEconomics& economics, const std::string& platform,
                                 bool has_cxl_tier);

// Whether a point gets a whole-model block, and its model then (nullptr otherwise): one of
// `own_models` by name, else a preset; a model without layer widths or vocabulary gets none.
const ModelPreset* whole_model_preset(const reports::Point& p,
                                      std::span<const ModelPreset> own_models = {});

}  // namespace hb::model
