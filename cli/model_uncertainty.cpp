#include "cli/model_uncertainty.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "cli/platform_setup.h"
#include "model/published_errors.h"

namespace hb::cli {

namespace {

std::string percent(double fraction) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f%%", 100 * fraction);
  return b;
}

}  // namespace

std::vector<reports::ModelUncertainty> model_uncertainty() {
  std::vector<reports::ModelUncertainty> out;
  for (const auto& e : model::recorded_published_errors()) {
    reports::ModelUncertainty u;
    u.figure = e.figure;
    u.rows = e.rows;
    u.rel = e.max_abs_error;
    u.median_abs_error = e.median_abs_error;
    u.source = "validate-model --published (" + std::string(model::kPublishedErrorsRecorded) +
               "), " + std::to_string(e.rows) + " rows (" + e.publications + "), median |error| " +
               percent(e.median_abs_error) + ", max " + percent(e.max_abs_error);
    out.push_back(std::move(u));
  }
  return out;
}

model::PublishedValidation published_validation(
    const std::function<void(const std::string&)>& progress) {
  const auto rows = model::parse_published_measurements(model::embedded_published_measurements(),
                                                        "model/published/measurements.json");
  const PlatformSetup platform = setup_platform(model::published_row_sweep(rows.front()));
  return model::project_published(rows, platform.env, progress);
}

std::vector<reports::PlatformAssumption> platform_assumptions(
    const std::vector<model::PlatformModel>& platforms) {
  std::vector<reports::PlatformAssumption> out;
  for (const auto& m : platforms) {
    auto add = [&](const char* figure, const std::optional<model::SourcedFigure>& f) {
      if (f) out.push_back({m.name, figure, f->describe()});
    };
    const auto& e = m.economics;
    add("price per hour (USD, node)", e.price_per_hour_usd);
    add("purchase price (USD, node)", e.purchase_price_usd);
    add("amortisation (years)", e.amortisation_years);
    add("GPUs per node", e.gpus_per_node);
    add("GPU power (W, each)", e.gpu_power_w);
    add("CPU power (W, node)", e.cpu_power_w);
    add("DRAM power (W, node)", e.memory_power_w);
    add("CXL power (W, node)", e.cxl_power_w);
    auto bandwidth = [&](const char* figure, double gbps, const std::string& key) {
      const auto s = m.sources.find(key);
      char v[32];
      std::snprintf(v, sizeof v, "%g", gbps);
      out.push_back(
          {m.name, figure,
           std::string(v) + " (" + (s == m.sources.end() ? "no source given" : s->second) + ")"});
    };
    bandwidth("accelerator memory (GB/s)", m.accelerator.memory_gbps, "accelerator.memory_gbps");
    if (!m.links.empty())
      bandwidth("host link, host to device (GB/s)", m.link().h2d_gbps,
                "links[" + std::to_string(&m.link() - m.links.data()) + "].h2d_gbps");
  }
  return out;
}

}  // namespace hb::cli
