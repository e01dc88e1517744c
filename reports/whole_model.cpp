#include "reports/whole_model.h"

#include <cmath>

#include "core/error.h"

namespace hb::reports {

namespace {

constexpr double kNsPerS = 1e9;
constexpr double kSecondsPerHour = 3600;
constexpr double kTokensPerMillion = 1e6;

bool positive(double v) { return std::isfinite(v) && v > 0; }

void require(bool ok, const std::string& what) {
  if (!ok) throw Error("whole-model figures: " + what, "a bug in the caller: report it");
}

bool close(double a, double b) { return std::fabs(a - b) <= 1e-6 * std::fabs(b); }

}  // namespace

WholeModel make_whole_model(const WholeModelInputs& in) {
  require(in.layers >= 1, "layers " + std::to_string(in.layers) + " < 1");
  require(in.batch >= 1, "batch " + std::to_string(in.batch) + " < 1");
  require(positive(in.layer_step_ns), "the layer step time must be > 0");
  require(std::isfinite(in.outside_layers_ns) && in.outside_layers_ns >= 0,
          "the time outside the layers must be >= 0");
  for (const AcceleratorShare* s : {&in.usd_per_hour, &in.watts}) {
    require(!s->value || positive(*s->value), "a price or power share must be > 0");
    require(!s->basis.empty(), "a price or power share needs its basis or its blank reason");
  }
  WholeModel w;
  w.layers = in.layers;
  w.layer_step_ns = in.layer_step_ns;
  w.outside_layers_ns = in.outside_layers_ns;
  w.outside_layers_provenance = in.outside_layers_provenance;
  w.caveat = in.caveat;
  w.itl_ns = in.layers * in.layer_step_ns + in.outside_layers_ns;
  w.tokens_per_s = in.batch * kNsPerS / w.itl_ns;
  w.tokens_per_s_per_user = kNsPerS / w.itl_ns;
  require(in.gpus >= 1 && in.gpus_per_node >= 0, "GPUs per replica must be >= 1");
  w.gpus = in.gpus;
  w.tokens_per_s_per_gpu = w.tokens_per_s / in.gpus;
  w.gpus_per_node = in.gpus_per_node;
  if (in.gpus_per_node > 0) w.tokens_per_s_per_node = w.tokens_per_s_per_gpu * in.gpus_per_node;
  if (in.usd_per_hour.value) {
    w.accelerator_usd_per_hour = in.usd_per_hour.value;
    w.cost_basis = in.usd_per_hour.basis;
    w.cost_per_mtok_usd =
        *in.usd_per_hour.value * in.gpus / (w.tokens_per_s * kSecondsPerHour) * kTokensPerMillion;
  } else {
    w.cost_blank_reason = in.usd_per_hour.basis;
  }
  if (in.watts.value) {
    w.accelerator_watts = in.watts.value;
    w.power_basis = in.watts.basis;
    w.tokens_per_s_per_w = w.tokens_per_s_per_gpu / *in.watts.value;
  } else {
    w.power_blank_reason = in.watts.basis;
  }
  return w;
}

std::string whole_model_problem(const WholeModel& w, int batch) {
  if (w.layers < 1) return "layers must be >= 1";
  if (!positive(w.layer_step_ns) || !positive(w.itl_ns) || !positive(w.tokens_per_s) ||
      !positive(w.tokens_per_s_per_user))
    return "layer_step_ns, itl_ns and the token rates must be > 0";
  if (!(std::isfinite(w.outside_layers_ns) && w.outside_layers_ns >= 0))
    return "outside_layers_ns must be >= 0";
  if (!close(w.itl_ns, w.layers * w.layer_step_ns + w.outside_layers_ns))
    return "itl_ns is not layers x layer_step_ns + outside_layers_ns";
  if (!close(w.tokens_per_s, batch * kNsPerS / w.itl_ns) ||
      !close(w.tokens_per_s_per_user, kNsPerS / w.itl_ns))
    return "tokens_per_s is not batch / ITL, or tokens_per_s_per_user not 1 / ITL";
  if (w.gpus < 1 || !close(w.tokens_per_s_per_gpu, w.tokens_per_s / w.gpus))
    return "gpus must be >= 1 and tokens_per_s_per_gpu tokens_per_s / gpus";
  if (w.cost_per_mtok_usd ? !positive(*w.cost_per_mtok_usd) : w.cost_blank_reason.empty())
    return "cost_per_mtok_usd must be > 0, or null with cost_blank_reason";
  if (w.tokens_per_s_per_w ? !positive(*w.tokens_per_s_per_w) : w.power_blank_reason.empty())
    return "tokens_per_s_per_w must be > 0, or null with power_blank_reason";
  if (w.cost_per_mtok_usd && w.accelerator_usd_per_hour &&
      !close(*w.cost_per_mtok_usd, *w.accelerator_usd_per_hour * w.gpus /
                                       (w.tokens_per_s * kSecondsPerHour) * kTokensPerMillion))
    return "cost_per_mtok_usd does not follow from accelerator_usd_per_hour and tokens_per_s";
  if (w.tokens_per_s_per_w && w.accelerator_watts &&
      !close(*w.tokens_per_s_per_w, w.tokens_per_s / w.gpus / *w.accelerator_watts))
    return "tokens_per_s_per_w does not follow from accelerator_watts and tokens_per_s";
  return "";
}

}  // namespace hb::reports
