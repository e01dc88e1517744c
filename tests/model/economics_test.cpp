// A platform's economics (model/economics.h): the profile member's reading and its errors, the
// command line's overrides, and one accelerator's share of its node's price and power, against
// hand-computed values.
#include "model/economics.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "model/platform_model.h"

namespace hb::model {
namespace {

// A complete preset document with `economics` as its economics member ("" = none).
std::string doc_with(const std::string& economics) {
  std::string text = preset_text("h200-pcie5-emr");
  const size_t at = text.find(",\n  \"economics\"");
  if (at != std::string::npos) text = text.substr(0, at) + "\n}\n";
  if (economics.empty()) return text;
  return text.substr(0, text.rfind('}')) + ", \"economics\": " + economics + "}\n";
}

std::string error_of(const std::string& economics) {
  try {
    parse_platform_model(doc_with(economics), "mine.json");
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage);
    return e.what();
  }
  return "";
}

const char* kFull = R"({
  "price_per_hour_usd": {"value": 98.32, "source": "a price list", "date": "2025-06"},
  "gpus_per_node": {"value": 8, "source": "the node", "date": "2025-06"},
  "gpu_power_w": {"value": 700, "source": "datasheet", "date": "2025-06"},
  "cpu_power_w": {"value": 700, "source": "2 x 350 W", "date": "2025-06"},
  "memory_power_w": {"value": 160, "source": "16 DIMMs at 10 W", "estimate": true},
  "comment": "allowed"})";

TEST(Economics, ProfileMemberIsReadWithSourcesAndDates) {
  const PlatformModel m = parse_platform_model(doc_with(kFull), "mine.json");
  const PlatformEconomics& e = m.economics;
  ASSERT_TRUE(e.price_per_hour_usd && e.gpus_per_node && e.memory_power_w);
  EXPECT_DOUBLE_EQ(e.price_per_hour_usd->value, 98.32);
  EXPECT_EQ(e.price_per_hour_usd->date, "2025-06");
  EXPECT_TRUE(e.memory_power_w->estimate);
  EXPECT_FALSE(e.cxl_power_w.has_value());
  EXPECT_EQ(e.gpu_power_w->describe(), "700 (datasheet, 2025-06)");
  EXPECT_EQ(e.memory_power_w->describe(), "160 (estimate: 16 DIMMs at 10 W)");
  // No member: empty, and the shares say what is missing and how to give it.
  EXPECT_TRUE(parse_platform_model(doc_with(""), "mine.json").economics.empty());
}

TEST(Economics, SharesOfOneAcceleratorByHand) {
  const PlatformEconomics e = parse_platform_model(doc_with(kFull), "mine.json").economics;
  const auto price = usd_per_accelerator_hour(e, "mine");
  ASSERT_TRUE(price.value);
  EXPECT_DOUBLE_EQ(*price.value, 98.32 / 8);  // $12.29 per GPU-hour
  EXPECT_NE(price.basis.find("node $98.32 (a price list, 2025-06) per hour / 8"), std::string::npos)
      << price.basis;
  const auto watts = watts_per_accelerator(e, "mine", false);
  ASSERT_TRUE(watts.value);
  EXPECT_DOUBLE_EQ(*watts.value, (8 * 700 + 700 + 160) / 8.0);  // 807.5 W
  // A node with a CXL tier needs its expanders' power.
  const auto no_cxl = watts_per_accelerator(e, "mine", true);
  EXPECT_FALSE(no_cxl.value);
  EXPECT_NE(no_cxl.basis.find("no CXL expander power for platform mine"), std::string::npos)
      << no_cxl.basis;
  EXPECT_NE(no_cxl.basis.find("cxl_power_w"), std::string::npos) << no_cxl.basis;
  EXPECT_NE(no_cxl.basis.find("--power cxl=W"), std::string::npos) << no_cxl.basis;
  PlatformEconomics with_cxl = e;
  with_cxl.cxl_power_w = SourcedFigure{50, "2 expanders", "", true};
  EXPECT_DOUBLE_EQ(*watts_per_accelerator(with_cxl, "mine", true).value, 6510 / 8.0);
}

TEST(Economics, PurchasePriceIsAmortisedOverYearsOf8766Hours) {
  const PlatformEconomics e = parse_platform_model(doc_with(R"({
    "purchase_price_usd": {"value": 300000, "source": "quote", "date": "2026-01"},
    "amortisation_years": {"value": 4, "source": "policy", "estimate": true},
    "gpus_per_node": {"value": 8, "source": "the node", "date": "2026-01"}})"),
                                                   "mine.json")
                                  .economics;
  const auto price = usd_per_accelerator_hour(e, "mine");
  ASSERT_TRUE(price.value);
  EXPECT_DOUBLE_EQ(*price.value, 300000.0 / (4 * 8766) / 8);  // $1.0695 per GPU-hour
}

TEST(Economics, MissingFiguresAreBlankWithWhatToGive) {
  PlatformEconomics e;
  const auto price = usd_per_accelerator_hour(e, "h200-pcie5-emr");
  EXPECT_FALSE(price.value);
  EXPECT_NE(price.basis.find("no price for platform h200-pcie5-emr"), std::string::npos);
  EXPECT_NE(price.basis.find("--price USD_PER_HOUR"), std::string::npos);
  const auto watts = watts_per_accelerator(e, "", false);
  EXPECT_FALSE(watts.value);
  // Without a profile the text says how to give them on the command line.
  EXPECT_NE(watts.basis.find("no GPU power, CPU power, DRAM power, GPU count per node"),
            std::string::npos)
      << watts.basis;
  EXPECT_NE(watts.basis.find("pass --power gpu=W,cpu=W,memory=W --gpus-per-node N"),
            std::string::npos)
      << watts.basis;
  e.price_per_hour_usd = SourcedFigure{10, "x", "2026-01", false};
  const auto no_count = usd_per_accelerator_hour(e, "p");
  EXPECT_FALSE(no_count.value);
  EXPECT_NE(no_count.basis.find("no GPU count per node for platform p"), std::string::npos);
}

TEST(Economics, CommandLineOverridesWinAndDefaultToOneGpu) {
  PlatformEconomics e = parse_platform_model(doc_with(kFull), "mine.json").economics;
  EconomicsOverride o;
  o.purchase_price_usd = 200000;
  o.amortisation_years = 5;
  o.gpu_power_w = 1000;
  apply_override(e, o, "2026-12-05");
  EXPECT_FALSE(e.price_per_hour_usd.has_value());  // a purchase replaces the hourly price
  EXPECT_DOUBLE_EQ(e.gpu_power_w->value, 1000);
  EXPECT_EQ(e.gpu_power_w->date, "2026-12-05");
  EXPECT_NE(e.gpu_power_w->source.find("--power gpu="), std::string::npos);
  EXPECT_DOUBLE_EQ(e.gpus_per_node->value, 8);  // the profile's stays
  // Alone (a measured run without a profile): one GPU, said in the basis.
  PlatformEconomics alone;
  EconomicsOverride price;
  price.price_per_hour_usd = 3.5;
  apply_override(alone, price, "2026-12-05");
  const auto share = usd_per_accelerator_hour(alone, "");
  ASSERT_TRUE(share.value);
  EXPECT_DOUBLE_EQ(*share.value, 3.5);
  EXPECT_NE(share.basis.find("default of --gpus-per-node"), std::string::npos) << share.basis;
  // Nothing given: nothing changes.
  PlatformEconomics untouched;
  apply_override(untouched, EconomicsOverride{}, "2026-12-05");
  EXPECT_TRUE(untouched.empty());
}

TEST(Economics, ProfileErrorsNameTheJsonPath) {
  auto expect = [](const std::string& economics, std::initializer_list<const char*> pieces) {
    const std::string msg = error_of(economics);
    ASSERT_FALSE(msg.empty()) << "accepted: " << economics;
    EXPECT_NE(msg.find("mine.json: $.economics"), std::string::npos) << msg;
    for (const char* p : pieces) EXPECT_NE(msg.find(p), std::string::npos) << p << " in " << msg;
  };
  expect(R"({"price_per_hour": {"value": 1, "source": "x", "date": "2026-01"}})",
         {"unknown member \"price_per_hour\""});
  expect(R"({"price_per_hour_usd": 98.32})", {"price_per_hour_usd", "says where it comes from"});
  expect(R"({"gpu_power_w": {"value": 700, "source": "datasheet"}})",
         {"gpu_power_w", "missing member \"date\"", "\"estimate\": true"});
  expect(R"({"gpu_power_w": {"value": 700, "source": "", "estimate": true}})", {"source is empty"});
  expect(R"({"gpu_power_w": {"value": 700, "source": "d", "date": "June 2025"}})",
         {"gpu_power_w.date", "YYYY-MM"});
  expect(R"({"gpu_power_w": {"value": -5, "source": "d", "estimate": true}})",
         {"gpu_power_w.value", "must be >= 1 and <= 100000"});
  expect(R"({"cpu_power_w": {"value": -1, "source": "d", "estimate": true}})",
         {"cpu_power_w.value", "must be >= 0 and <= 1e+06"});
  expect(R"({"gpus_per_node": {"value": 2.5, "source": "d", "estimate": true}})",
         {"gpus_per_node.value", "whole number"});
  expect(R"({"price_per_hour_usd": {"value": 0, "source": "d", "estimate": true}})",
         {"must be >= 0.0001 and <= 1e+07"});
  // Beyond any real node: refused here, not after the sweep (a 307-digit $/Mtok).
  expect(R"({"price_per_hour_usd": {"value": 1e300, "source": "d", "estimate": true}})",
         {"price_per_hour_usd.value", "<= 1e+07"});
  expect(R"({"purchase_price_usd": {"value": 1e5, "source": "d", "estimate": true}})",
         {"go together"});
  expect(R"({"price_per_hour_usd": {"value": 1, "source": "d", "estimate": true},
             "purchase_price_usd": {"value": 1e5, "source": "d", "estimate": true},
             "amortisation_years": {"value": 4, "source": "d", "estimate": true}})",
         {"give one"});
}

// Every shipped preset prices and powers its accelerator, every figure sourced and dated or an
// estimate (the reader enforces it), and the CXL series differs only by its expanders.
TEST(Economics, EveryPresetHasCompleteEconomics) {
  for (const auto& name : preset_names()) {
    SCOPED_TRACE(name);
    const PlatformModel m = load_platform_model("preset:" + name);
    const auto price = usd_per_accelerator_hour(m.economics, m.name);
    const auto watts =
        watts_per_accelerator(m.economics, m.name, m.tier(MemoryKind::cxl) != nullptr);
    ASSERT_TRUE(price.value) << price.basis;
    ASSERT_TRUE(watts.value) << watts.basis;
    EXPECT_GT(*price.value, 0.5);
    EXPECT_LT(*price.value, 20);
    EXPECT_GT(*watts.value, 150);  // t4-pcie3: a 70 W T4 with its VM's share of the host
    EXPECT_LT(*watts.value, 1500);
  }
  const auto cxl = [](const char* n) { return load_platform_model(n); };
  EXPECT_EQ(cxl("h100-pcie5-cxl0").tier(MemoryKind::cxl), nullptr);
  EXPECT_EQ(cxl("h100-pcie5-cxl1").tier(MemoryKind::cxl)->capacity_bytes, int64_t{256} << 30);
  EXPECT_EQ(cxl("h100-pcie5-cxl").tier(MemoryKind::cxl)->capacity_bytes, int64_t{512} << 30);
  EXPECT_LT(*usd_per_accelerator_hour(cxl("h100-pcie5-cxl0").economics, "").value,
            *usd_per_accelerator_hour(cxl("h100-pcie5-cxl1").economics, "").value);
  EXPECT_EQ(load_platform_model("mi300x-pcie5-spr").accelerator.kind, "rocm");
}

}  // namespace
}  // namespace hb::model
