#pragma once
// What a platform costs and draws: the optional "economics" member of a platform profile
// (hybridbench.platform/1, beside "model"; schema in model/README.md), the command line's
// overrides (run --price/--power/--gpus-per-node), and one accelerator's share of both, which
// prices a point's whole-model decode (reports/whole_model.h: $/Mtok, tokens/s per W).
#include <optional>
#include <string>

#include "core/parse.h"
#include "reports/whole_model.h"

namespace hb::model {

// One economics figure and where it comes from: a source and the date it was read (a
// datasheet, a price list), or `estimate` with the reasoning in `source`. The reader refuses a
// figure with neither (model/README.md).
struct SourcedFigure {
  double value = 0;
  std::string source;
  std::string date;  // "2025-06": when the price list or datasheet was read
  bool estimate = false;
  // "700 (NVIDIA H100 SXM datasheet, 2023-05)" or "700 (estimate: ...)", value in %g.
  std::string describe() const;
};

// Node figures, each optional. A price is per hour (rental, or an all-in hourly rate), or a
// purchase price amortised over years (both read as price per hour = purchase / (years x 8766)).
// Power is the node's nameplate draw (provisioned, not measured): every GPU's, all its CPUs'
// together, its DRAM's and its CXL memory expanders' (absent on a node without a CXL tier = 0).
struct PlatformEconomics {
  std::optional<SourcedFigure> price_per_hour_usd;
  std::optional<SourcedFigure> purchase_price_usd;
  std::optional<SourcedFigure> amortisation_years;
  std::optional<SourcedFigure> gpus_per_node;
  std::optional<SourcedFigure> gpu_power_w;     // one GPU (its TDP / TBP)
  std::optional<SourcedFigure> cpu_power_w;     // every CPU of the node together
  std::optional<SourcedFigure> memory_power_w;  // the node's host DRAM
  std::optional<SourcedFigure> cxl_power_w;     // the node's CXL memory expanders
  bool empty() const;
};

// What an economics figure may be, wherever it is given (a profile's "economics", run --price
// and --power): far beyond any real node (a $10M-an-hour node, a 100 kW GPU) a figure is a
// slip of units or digits, and the $/Mtok it gives would be meaningless (a 1e300 price prints
// 307 digits) or not a number at all. Kept within these ranges every derived figure is finite
// and > 0, so a bad figure is refused before the sweep, never after it.
namespace economics_range {
inline const parse::RealRange kPricePerHourUsd = parse::RealRange::between(1e-4, 1e7);
inline const parse::RealRange kPurchasePriceUsd = parse::RealRange::between(1, 1e10);
inline const parse::RealRange kAmortisationYears = parse::RealRange::between(0.1, 100);
inline const parse::RealRange kGpuPowerW = parse::RealRange::between(1, 1e5);
inline const parse::RealRange kNodePartPowerW =
    parse::RealRange::between(0, 1e6);  // cpu, DRAM, CXL
inline constexpr int kMaxGpusPerNode = 1024;
}  // namespace economics_range

// run --price/--power/--gpus-per-node, already range-checked (cli): each given value replaces
// the profile's (a price per hour drops a purchase price and the reverse), sourced "given on the
// command line" with the run's date.
struct EconomicsOverride {
  std::optional<double> price_per_hour_usd, purchase_price_usd, amortisation_years;
  std::optional<double> gpus_per_node, gpu_power_w, cpu_power_w, memory_power_w, cxl_power_w;
  bool empty() const;
};
void apply_override(PlatformEconomics& e, const EconomicsOverride& o, const std::string& date);

// One accelerator's share of its node's price per hour: (price per hour, or purchase / (years x
// 8766 h)) / GPUs per node, with its basis; or blank with the missing value named and how to
// give it (`platform` names the profile in that text; "" = the run has none).
reports::AcceleratorShare usd_per_accelerator_hour(const PlatformEconomics& e,
                                                   const std::string& platform);
// One accelerator's share of its node's power: (GPUs x GPU + CPUs + DRAM + CXL expanders) / GPUs.
// `has_cxl_tier`: the node has CXL memory, so its expanders' power is needed too.
reports::AcceleratorShare watts_per_accelerator(const PlatformEconomics& e,
                                                const std::string& platform, bool has_cxl_tier);

}  // namespace hb::model
