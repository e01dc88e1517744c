#include "cli/economics_options.h"

#include <ctime>
#include <map>

#include "core/error.h"
#include "core/parse.h"

namespace hb::cli {

namespace {

// "k=v,k=v" into a map; an unknown or repeated key, or an item without '=', is refused.
std::map<std::string, std::string> key_values(const std::string& text, const std::string& option,
                                              std::initializer_list<const char*> keys,
                                              const std::string& example) {
  std::map<std::string, std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, end - start);
    const size_t eq = item.find('=');
    const std::string key = item.substr(0, eq);
    bool known = false;
    for (const char* k : keys) known = known || key == k;
    if (eq == std::string::npos || !known || out.count(key))
      throw Error(option + " " + text + ": '" + item + "' is not " +
                      (out.count(key) ? "given once" : "KEY=VALUE with a known key"),
                  "write it as " + example);
    out[key] = item.substr(eq + 1);
    start = end + 1;
  }
  return out;
}

}  // namespace

void add_economics_options(CLI::App& app, EconomicsArgs& a) {
  app.add_option("--price", a.price,
                 "What the node serving the run costs, for $ per million tokens: USD per hour "
                 "(e.g. 98.32), or purchase=USD,years=N (amortised over N years of 8766 h); "
                 "overrides the --platform profile's economics (model/README.md)")
      ->type_name("USD_PER_HOUR|purchase=USD,years=N");
  app.add_option("--power", a.power,
                 "The node's power in W, for tokens/s per W: gpu=W (one GPU), cpu=W (all CPUs), "
                 "memory=W (DRAM), cxl=W (CXL expanders), any of them; overrides the profile's")
      ->type_name("gpu=W,cpu=W,memory=W,cxl=W");
  app.add_option("--gpus-per-node", a.gpus_per_node,
                 "GPUs that share the node's price and power (default: the profile's, else 1)")
      ->type_name("N");
}

model::EconomicsOverride parse_economics_args(const EconomicsArgs& a) {
  model::EconomicsOverride o;
  namespace R = model::economics_range;
  if (!a.price.empty()) {
    if (a.price.find('=') == std::string::npos) {
      o.price_per_hour_usd = parse::real(a.price, "--price (USD per hour)", R::kPricePerHourUsd);
    } else {
      const auto kv =
          key_values(a.price, "--price", {"purchase", "years"}, "purchase=300000,years=4");
      if (kv.size() != 2)
        throw Error("--price " + a.price + ": a purchase price needs both purchase= and years=",
                    "write it as purchase=300000,years=4, or give a price per hour");
      o.purchase_price_usd =
          parse::real(kv.at("purchase"), "--price purchase (USD)", R::kPurchasePriceUsd);
      o.amortisation_years = parse::real(kv.at("years"), "--price years", R::kAmortisationYears);
    }
  }
  if (!a.power.empty()) {
    const auto kv = key_values(a.power, "--power", {"gpu", "cpu", "memory", "cxl"},
                               "gpu=700,cpu=700,memory=200,cxl=0");
    auto watts = [&](const char* key, const parse::RealRange& r) -> std::optional<double> {
      const auto it = kv.find(key);
      if (it == kv.end()) return std::nullopt;
      return parse::real(it->second, std::string("--power ") + key + " (W)", r);
    };
    o.gpu_power_w = watts("gpu", R::kGpuPowerW);
    o.cpu_power_w = watts("cpu", R::kNodePartPowerW);
    o.memory_power_w = watts("memory", R::kNodePartPowerW);
    o.cxl_power_w = watts("cxl", R::kNodePartPowerW);
  }
  if (!a.gpus_per_node.empty())
    o.gpus_per_node = static_cast<double>(
        parse::integer(a.gpus_per_node, "--gpus-per-node", 1, R::kMaxGpusPerNode));
  return o;
}

std::string today_utc() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &utc);
  return buf;
}

}  // namespace hb::cli
