// The "whole_model" block of a report point (schema: reports/README.md). Optional and additive:
// reports from before it read without it. Blank figures are null with their reason beside them;
// the basis fields are written only with the figure they explain.
#include "core/error.h"
#include "reports/json_checked.h"
#include "reports/schema.h"
#include "reports/whole_model.h"

namespace hb::reports {

using json = nlohmann::ordered_json;

json whole_model_json(const WholeModel& w) {
  json j = {{"layers", w.layers},
            {"layer_step_ns", w.layer_step_ns},
            {"outside_layers_ns", w.outside_layers_ns},
            {"outside_layers_provenance", to_string(w.outside_layers_provenance)},
            {"itl_ns", w.itl_ns},
            {"tokens_per_s", w.tokens_per_s},
            {"tokens_per_s_per_user", w.tokens_per_s_per_user},
            {"gpus", w.gpus},
            {"tokens_per_s_per_gpu", w.tokens_per_s_per_gpu}};
  if (w.tokens_per_s_per_node) {
    j["gpus_per_node"] = w.gpus_per_node;
    j["tokens_per_s_per_node"] = *w.tokens_per_s_per_node;
  }
  j["cost_per_mtok_usd"] = w.cost_per_mtok_usd ? json(*w.cost_per_mtok_usd) : json(nullptr);
  if (!w.cost_per_mtok_usd) j["cost_blank_reason"] = w.cost_blank_reason;
  if (w.accelerator_usd_per_hour) {
    j["accelerator_usd_per_hour"] = *w.accelerator_usd_per_hour;
    j["cost_basis"] = w.cost_basis;
  }
  j["tokens_per_s_per_w"] = w.tokens_per_s_per_w ? json(*w.tokens_per_s_per_w) : json(nullptr);
  if (!w.tokens_per_s_per_w) j["power_blank_reason"] = w.power_blank_reason;
  if (w.accelerator_watts) {
    j["accelerator_watts"] = *w.accelerator_watts;
    j["power_basis"] = w.power_basis;
  }
  if (!w.caveat.empty()) j["caveat"] = w.caveat;
  return j;
}

namespace {

// A figure that is a number or null (blank, its reason read beside it).
std::optional<double> number_or_null(const JsonReader& r, const std::string& key) {
  const JsonReader v = r.member(key);
  if (v.json().is_null()) return std::nullopt;
  return v.as_number();
}

}  // namespace

WholeModel read_whole_model(const JsonReader& r, int batch) {
  WholeModel w;
  w.layers = r.i32("layers");
  w.layer_step_ns = r.num("layer_step_ns");
  w.outside_layers_ns = r.num("outside_layers_ns");
  const std::string prov = r.str("outside_layers_provenance");
  const auto p = kProvenances.parse(prov);
  if (!p)
    r.member("outside_layers_provenance")
        .fail("\"" + prov + "\" is not one of: " + kProvenances.list());
  w.outside_layers_provenance = *p;
  w.itl_ns = r.num("itl_ns");
  w.tokens_per_s = r.num("tokens_per_s");
  w.tokens_per_s_per_user = r.num("tokens_per_s_per_user");
  // Reports from before tensor parallelism: one GPU per replica.
  w.gpus = r.has("gpus") ? r.i32("gpus") : 1;
  w.tokens_per_s_per_gpu =
      r.has("tokens_per_s_per_gpu") ? r.num("tokens_per_s_per_gpu") : w.tokens_per_s / w.gpus;
  if (r.has("tokens_per_s_per_node")) {
    w.gpus_per_node = r.i32("gpus_per_node");
    w.tokens_per_s_per_node = r.num("tokens_per_s_per_node");
  }
  w.cost_per_mtok_usd = number_or_null(r, "cost_per_mtok_usd");
  if (r.has("cost_blank_reason")) w.cost_blank_reason = r.str("cost_blank_reason");
  if (r.has("accelerator_usd_per_hour")) {
    w.accelerator_usd_per_hour = r.num("accelerator_usd_per_hour");
    w.cost_basis = r.str("cost_basis");
  }
  w.tokens_per_s_per_w = number_or_null(r, "tokens_per_s_per_w");
  if (r.has("power_blank_reason")) w.power_blank_reason = r.str("power_blank_reason");
  if (r.has("accelerator_watts")) {
    w.accelerator_watts = r.num("accelerator_watts");
    w.power_basis = r.str("power_basis");
  }
  if (r.has("caveat")) w.caveat = r.str("caveat");
  if (const std::string bad = whole_model_problem(w, batch); !bad.empty()) r.fail(bad);
  return w;
}

}  // namespace hb::reports
