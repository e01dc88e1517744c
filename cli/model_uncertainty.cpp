#include "cli/model_uncertainty.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "cli/platform_setup.h"
#include "core/stats.h"

namespace hb::cli {

namespace {

std::string percent(double fraction) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f%%", 100 * fraction);
  return b;
}

// The kind of figure a row's metric checks; "" for a metric no report figure is (a share).
std::string figure_of(model::PublishedMetric m) {
  switch (m) {
    case model::PublishedMetric::ms_per_token:
      return "itl";
    case model::PublishedMetric::tokens_per_s:
      return "tokens_per_s";
    case model::PublishedMetric::transfer_share:
      return "";
  }
  return "";
}

}  // namespace

std::vector<reports::ModelUncertainty> model_uncertainty(const model::PublishedValidation& v) {
  std::vector<reports::ModelUncertainty> out;
  for (const char* figure : {"itl", "tokens_per_s"}) {
    std::vector<double> errors;
    std::vector<std::string> publications;
    for (const auto& p : v.rows) {
      if (!p.row.excluded.empty() || figure_of(p.row.metric) != figure) continue;
      errors.push_back(std::fabs(p.error));
      if (std::find(publications.begin(), publications.end(), p.row.publication) ==
          publications.end())
        publications.push_back(p.row.publication);
    }
    if (errors.empty()) continue;
    reports::ModelUncertainty u;
    u.figure = figure;
    u.rows = static_cast<int>(errors.size());
    u.rel = *std::max_element(errors.begin(), errors.end());
    u.median_abs_error = quantile(errors, 0.5);
    std::string from;
    for (const auto& x : publications) from += (from.empty() ? "" : ", ") + x;
    u.source = "validate-model --published, " + std::to_string(u.rows) + " rows (" + from +
               "; single-GPU nodes), median |error| " + percent(u.median_abs_error) + ", max " +
               percent(u.rel);
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
