#include "model/economics_json.h"

#include <cctype>
#include <cmath>

namespace hb::model {

namespace {

// "2025-06" or "2025-06-30": the month (or day) a price list or datasheet was read.
bool is_date(const std::string& d) {
  if (d.size() != 7 && d.size() != 10) return false;
  for (size_t i = 0; i < d.size(); ++i) {
    const bool dash = i == 4 || i == 7;
    if (dash ? d[i] != '-' : !std::isdigit(static_cast<unsigned char>(d[i]))) return false;
  }
  return true;
}

// `range`: model/economics.h's range of the figure; nullptr: the GPU count (whole, 1-1024).
SourcedFigure read_figure(const ProfileReader& j, const parse::RealRange* range) {
  if (!j.json().is_object())
    j.fail(
        "expected {\"value\": N, \"source\": \"...\", \"date\": \"YYYY-MM\"} (or \"estimate\": "
        "true with the reasoning as the source): an economics figure says where it comes from");
  j.only({"value", "source", "date", "estimate"});
  SourcedFigure f;
  f.value = j.at("value").number();
  f.source = j.at("source").str();
  if (f.source.empty()) j.at("source").fail("the source is empty");
  f.estimate = j.has("estimate") && j.at("estimate").boolean();
  if (j.has("date")) f.date = j.at("date").str();
  if (!f.estimate && f.date.empty())
    j.fail(
        "missing member \"date\" (when the source was read, YYYY-MM), or mark the figure "
        "\"estimate\": true with its reasoning");
  if (!f.date.empty() && !is_date(f.date)) j.at("date").fail("expected YYYY-MM or YYYY-MM-DD");
  const ProfileReader v = j.at("value");
  if (range && !range->contains(f.value)) v.fail("must be " + range->text());
  if (!range && !(f.value >= 1 && f.value <= economics_range::kMaxGpusPerNode &&
                  f.value == std::floor(f.value)))
    v.fail("must be a whole number from 1 to " + std::to_string(economics_range::kMaxGpusPerNode));
  return f;
}

std::optional<SourcedFigure> optional_figure(const ProfileReader& j, const char* key,
                                             const parse::RealRange* r) {
  if (!j.has(key)) return std::nullopt;
  return read_figure(j.at(key), r);
}

}  // namespace

PlatformEconomics read_economics(const ProfileReader& j) {
  j.only({"price_per_hour_usd", "purchase_price_usd", "amortisation_years", "gpus_per_node",
          "gpu_power_w", "cpu_power_w", "memory_power_w", "cxl_power_w", "comment"});
  PlatformEconomics e;
  namespace R = economics_range;
  e.price_per_hour_usd = optional_figure(j, "price_per_hour_usd", &R::kPricePerHourUsd);
  e.purchase_price_usd = optional_figure(j, "purchase_price_usd", &R::kPurchasePriceUsd);
  e.amortisation_years = optional_figure(j, "amortisation_years", &R::kAmortisationYears);
  e.gpus_per_node = optional_figure(j, "gpus_per_node", nullptr);
  e.gpu_power_w = optional_figure(j, "gpu_power_w", &R::kGpuPowerW);
  e.cpu_power_w = optional_figure(j, "cpu_power_w", &R::kNodePartPowerW);
  e.memory_power_w = optional_figure(j, "memory_power_w", &R::kNodePartPowerW);
  e.cxl_power_w = optional_figure(j, "cxl_power_w", &R::kNodePartPowerW);
  if (e.price_per_hour_usd && e.purchase_price_usd)
    j.fail(
        "both price_per_hour_usd and purchase_price_usd: give one (an hourly price, or a "
        "purchase price with amortisation_years)");
  if (e.purchase_price_usd.has_value() != e.amortisation_years.has_value())
    j.fail(
        "purchase_price_usd and amortisation_years go together: give both, or "
        "price_per_hour_usd instead");
  return e;
}

}  // namespace hb::model
