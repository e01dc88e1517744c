#include "model/economics.h"

#include <cmath>
#include <cstdio>
#include <vector>

namespace hb::model {

namespace {

// Hours in an average year (365.25 days): what a purchase price is spread over.
constexpr double kHoursPerYear = 8766;

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

std::string where(const std::string& platform) {
  return platform.empty() ? "" : " for platform " + platform;
}

// How to give a missing figure: in the profile (when there is one) or on the command line.
std::string how(const std::string& platform, const std::string& members, const std::string& cli) {
  return (platform.empty()
              ? "pass " + cli + ", or --platform FILE with an \"economics\" member"
              : "add " + members + " to its profile's \"economics\" member, or pass " + cli) +
         " (model/README.md)";
}

SourcedFigure given(double v, const std::string& what, const std::string& date) {
  return SourcedFigure{v, "given on the command line (" + what + ")", date, false};
}

}  // namespace

std::string SourcedFigure::describe() const {
  return number(value) + " (" + (estimate ? "estimate: " + source : source) +
         (date.empty() ? "" : ", " + date) + ")";
}

bool PlatformEconomics::empty() const {
  return !price_per_hour_usd && !purchase_price_usd && !amortisation_years && !gpus_per_node &&
         !gpu_power_w && !cpu_power_w && !memory_power_w && !cxl_power_w;
}

bool EconomicsOverride::empty() const {
  return !price_per_hour_usd && !purchase_price_usd && !amortisation_years && !gpus_per_node &&
         !gpu_power_w && !cpu_power_w && !memory_power_w && !cxl_power_w;
}

void apply_override(PlatformEconomics& e, const EconomicsOverride& o, const std::string& date) {
  if (o.price_per_hour_usd) {
    e.price_per_hour_usd = given(*o.price_per_hour_usd, "--price", date);
    e.purchase_price_usd.reset();
    e.amortisation_years.reset();
  }
  if (o.purchase_price_usd) {
    e.purchase_price_usd = given(*o.purchase_price_usd, "--price purchase=", date);
    e.amortisation_years = given(*o.amortisation_years, "--price years=", date);
    e.price_per_hour_usd.reset();
  }
  if (o.gpus_per_node) e.gpus_per_node = given(*o.gpus_per_node, "--gpus-per-node", date);
  if (o.gpu_power_w) e.gpu_power_w = given(*o.gpu_power_w, "--power gpu=", date);
  if (o.cpu_power_w) e.cpu_power_w = given(*o.cpu_power_w, "--power cpu=", date);
  if (o.memory_power_w) e.memory_power_w = given(*o.memory_power_w, "--power memory=", date);
  if (o.cxl_power_w) e.cxl_power_w = given(*o.cxl_power_w, "--power cxl=", date);
  // A price or power typed for this run without a GPU count is of what serves it: one
  // accelerator (said in the basis, never silent).
  if (!o.empty() && !e.gpus_per_node)
    e.gpus_per_node = SourcedFigure{
        1, "default of --gpus-per-node: the price and power given are one accelerator's", date,
        false};
}

reports::AcceleratorShare usd_per_accelerator_hour(const PlatformEconomics& e,
                                                   const std::string& platform) {
  const bool hourly = e.price_per_hour_usd.has_value();
  if (!hourly && !(e.purchase_price_usd && e.amortisation_years))
    return reports::AcceleratorShare::missing(
        "no price" + where(platform) + ": " +
        how(platform, "price_per_hour_usd (or purchase_price_usd and amortisation_years)",
            "--price USD_PER_HOUR or --price purchase=USD,years=N"));
  if (!e.gpus_per_node)
    return reports::AcceleratorShare::missing(
        "no GPU count per node" + where(platform) +
        " to share its price: " + how(platform, "gpus_per_node", "--gpus-per-node N"));
  const double gpus = e.gpus_per_node->value;
  std::string basis;
  double node_per_hour = 0;
  if (hourly) {
    node_per_hour = e.price_per_hour_usd->value;
    basis = "node $" + e.price_per_hour_usd->describe() + " per hour";
  } else {
    node_per_hour = e.purchase_price_usd->value / (e.amortisation_years->value * kHoursPerYear);
    basis = "node $" + e.purchase_price_usd->describe() + " over " +
            e.amortisation_years->describe() + " years of 8766 h = $" + number(node_per_hour) +
            " per hour";
  }
  basis += " / " + e.gpus_per_node->describe() + " GPUs per node";
  return {node_per_hour / gpus, basis};
}

reports::AcceleratorShare watts_per_accelerator(const PlatformEconomics& e,
                                                const std::string& platform, bool has_cxl_tier) {
  struct Part {
    const std::optional<SourcedFigure>& figure;
    const char *name, *member, *option;
    bool needed;
  };
  const Part parts[] = {{e.gpu_power_w, "GPU", "gpu_power_w", "gpu=W", true},
                        {e.cpu_power_w, "CPU", "cpu_power_w", "cpu=W", true},
                        {e.memory_power_w, "DRAM", "memory_power_w", "memory=W", true},
                        {e.cxl_power_w, "CXL expander", "cxl_power_w", "cxl=W", has_cxl_tier}};
  std::vector<std::string> missing, members, options;
  for (const Part& p : parts)
    if (p.needed && !p.figure) {
      missing.push_back(std::string(p.name) + " power");
      members.push_back(p.member);
      options.push_back(p.option);
    }
  std::string cli = options.empty() ? "" : "--power " + join(options, ",");
  if (!e.gpus_per_node) {
    missing.push_back("GPU count per node");
    members.push_back("gpus_per_node");
    if (!cli.empty()) cli += ' ';
    cli += "--gpus-per-node N";
  }
  if (!missing.empty())
    return reports::AcceleratorShare::missing("no " + join(missing, ", ") + where(platform) + ": " +
                                              how(platform, join(members, ", "), cli));
  const double gpus = e.gpus_per_node->value;
  double node_w = gpus * e.gpu_power_w->value;
  // Appended piece by piece: GCC 12 warns (-Wrestrict, a false positive) on "(" + string here.
  std::string basis = "(";
  basis += e.gpus_per_node->describe();
  basis += " GPUs x ";
  basis += e.gpu_power_w->describe();
  basis += " W";
  for (const Part& p : {parts[1], parts[2], parts[3]})
    if (p.figure) {
      node_w += p.figure->value;
      basis += " + " + std::string(p.name) + " " + p.figure->describe() + " W";
    }
  basis += ") / GPUs per node";
  return {node_w / gpus, basis};
}

}  // namespace hb::model
