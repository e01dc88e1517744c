// The whole-model figures of a point (reports/whole_model.h) against hand-computed values, their
// JSON block (reports/whole_model_json.cpp), and reports written before it existed.
#include "reports/whole_model.h"

#include <cmath>
#include <fstream>
#include <functional>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "fixtures.h"
#include "reports/json_io.h"
#include "reports/tables.h"

namespace hb::reports {
namespace {

// 80 layers of 1.2 ms and 4 ms outside them: ITL 100 ms exactly.
WholeModelInputs seventy_b_like() {
  WholeModelInputs in;
  in.layers = 80;
  in.layer_step_ns = 1.2e6;
  in.batch = 8;
  in.outside_layers_ns = 4e6;
  in.outside_layers_provenance = Provenance::modeled;
  in.usd_per_hour = {28.8, "node $230.40/h / 8 GPUs"};
  in.watts = {1000, "(8 x 700 W + 2400 W) / 8 GPUs"};
  return in;
}

TEST(WholeModel, ItlTokensCostAndPowerByHand) {
  const WholeModel w = make_whole_model(seventy_b_like());
  EXPECT_EQ(w.layers, 80);
  EXPECT_DOUBLE_EQ(w.itl_ns, 100e6);              // 80 x 1.2 ms + 4 ms
  EXPECT_DOUBLE_EQ(w.tokens_per_s, 80);           // 8 sequences / 0.1 s
  EXPECT_DOUBLE_EQ(w.tokens_per_s_per_user, 10);  // 1 / 0.1 s
  // $28.80 an hour buys 80 x 3600 = 288,000 tokens: $100 per million.
  ASSERT_TRUE(w.cost_per_mtok_usd);
  EXPECT_DOUBLE_EQ(*w.cost_per_mtok_usd, 100);
  ASSERT_TRUE(w.tokens_per_s_per_w);
  EXPECT_DOUBLE_EQ(*w.tokens_per_s_per_w, 0.08);  // 80 tokens/s over 1000 W
  EXPECT_EQ(w.cost_basis, "node $230.40/h / 8 GPUs");
  EXPECT_EQ(w.power_basis, "(8 x 700 W + 2400 W) / 8 GPUs");
  EXPECT_TRUE(w.cost_blank_reason.empty());
  EXPECT_EQ(whole_model_problem(w, 8), "");
}

TEST(WholeModel, OneLayerNothingOutsideIsTheStepItself) {
  WholeModelInputs in = seventy_b_like();
  in.layers = 1;
  in.batch = 1;
  in.layer_step_ns = 2.5e6;
  in.outside_layers_ns = 0;
  const WholeModel w = make_whole_model(in);
  EXPECT_DOUBLE_EQ(w.itl_ns, 2.5e6);
  EXPECT_DOUBLE_EQ(w.tokens_per_s, 400);
  EXPECT_DOUBLE_EQ(w.tokens_per_s_per_user, 400);
  EXPECT_DOUBLE_EQ(*w.cost_per_mtok_usd, 28.8 / (400 * 3600.0) * 1e6);  // $20 per Mtok
}

TEST(WholeModel, MissingEconomicsAreBlankWithTheirReasonNeverZero) {
  WholeModelInputs in = seventy_b_like();
  in.usd_per_hour = AcceleratorShare::missing("no price: add --price USD_PER_HOUR");
  in.watts = AcceleratorShare::missing("no CPU power: add --power cpu=W");
  const WholeModel w = make_whole_model(in);
  EXPECT_FALSE(w.cost_per_mtok_usd.has_value());
  EXPECT_FALSE(w.tokens_per_s_per_w.has_value());
  EXPECT_FALSE(w.accelerator_usd_per_hour.has_value());
  EXPECT_EQ(w.cost_blank_reason, "no price: add --price USD_PER_HOUR");
  EXPECT_EQ(w.power_blank_reason, "no CPU power: add --power cpu=W");
  EXPECT_DOUBLE_EQ(w.tokens_per_s, 80);  // the rest is unaffected
  EXPECT_EQ(whole_model_problem(w, 8), "");
}

TEST(WholeModel, InputsOutOfRangeAreRefused) {
  auto refused = [](auto edit) {
    WholeModelInputs in = seventy_b_like();
    edit(in);
    EXPECT_THROW(make_whole_model(in), Error);
  };
  refused([](WholeModelInputs& in) { in.layers = 0; });
  refused([](WholeModelInputs& in) { in.batch = 0; });
  refused([](WholeModelInputs& in) { in.layer_step_ns = 0; });
  refused([](WholeModelInputs& in) { in.layer_step_ns = std::nan(""); });
  refused([](WholeModelInputs& in) { in.outside_layers_ns = -1; });
  refused([](WholeModelInputs& in) { in.usd_per_hour.value = 0.0; });
  refused([](WholeModelInputs& in) { in.watts.value = -5.0; });
  refused([](WholeModelInputs& in) { in.watts = AcceleratorShare::missing(""); });
}

Report report_with_blocks() {
  Report r = testing::make_report();
  r.points[0].axes.batch = 8;
  r.points[0].whole_model = make_whole_model(seventy_b_like());
  WholeModelInputs blank = seventy_b_like();
  blank.batch = 1;
  blank.outside_layers_provenance = Provenance::emulated;
  blank.usd_per_hour = AcceleratorShare::missing("no price: add --price");
  blank.watts = AcceleratorShare::missing("no power: add --power");
  blank.caveat = "weights exceed the accelerator";
  r.points[1].whole_model = make_whole_model(blank);
  return r;
}

TEST(WholeModel, JsonRoundTripWritesNullWithReason) {
  const Report r = report_with_blocks();
  const std::string text = to_json_text(r);
  const Report back = from_json_text(text, "mem");
  ASSERT_TRUE(back.points[0].whole_model);
  const WholeModel& w = *back.points[0].whole_model;
  EXPECT_DOUBLE_EQ(w.itl_ns, 100e6);
  EXPECT_DOUBLE_EQ(*w.cost_per_mtok_usd, 100);
  EXPECT_DOUBLE_EQ(*w.accelerator_watts, 1000);
  EXPECT_EQ(back.points[1].whole_model->outside_layers_provenance, Provenance::emulated);
  EXPECT_FALSE(back.points[2].whole_model.has_value());
  EXPECT_EQ(to_json_text(back), text);
  const auto j = nlohmann::json::parse(text);
  const auto& blank = j["points"][1]["whole_model"];
  EXPECT_TRUE(blank["cost_per_mtok_usd"].is_null());
  EXPECT_TRUE(blank["tokens_per_s_per_w"].is_null());
  EXPECT_EQ(blank["cost_blank_reason"], "no price: add --price");
  EXPECT_FALSE(blank.contains("accelerator_usd_per_hour"));
  EXPECT_EQ(blank["caveat"], "weights exceed the accelerator");
  EXPECT_FALSE(j["points"][0]["whole_model"].contains("caveat"));  // written only when there is one
  EXPECT_EQ(back.points[1].whole_model->caveat, "weights exceed the accelerator");
}

// The markdown's whole-model table: figures, blanks with lettered reasons under the table, the
// caveat as a letter on the ITL.
TEST(WholeModel, MarkdownTableShowsBlanksAndCaveatsWithTheirReasons) {
  const std::string md = markdown_report(report_with_blocks());
  EXPECT_NE(md.find("### Whole model: 80 layers"), std::string::npos) << md;
  EXPECT_NE(md.find("| tokens/s per user | $/Mtok | tokens/s per W |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 100 ms |     80.0 |              10.0 |   $100 |          0.080 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("100 ms (a) |"), std::string::npos) << md;
  EXPECT_NE(md.find("- (b) |          - (c) |"), std::string::npos) << md;
  EXPECT_NE(md.find("- (a) weights exceed the accelerator\n- (b) no price: add --price\n- (c) no "
                    "power: add --power\n"),
            std::string::npos)
      << md;
}

void expect_refused(const std::function<void(nlohmann::json&)>& edit, const std::string& piece) {
  nlohmann::json j = nlohmann::json::parse(to_json_text(report_with_blocks()));
  edit(j["points"][0]["whole_model"]);
  try {
    from_json_text(j.dump(), "edited.json");
    FAIL() << "no error for " << piece;
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("edited.json: $.points[0].whole_model"), std::string::npos) << msg;
    EXPECT_NE(msg.find(piece), std::string::npos) << msg;
  }
}

TEST(WholeModel, EditedBlocksAreRefusedWithTheirPath) {
  expect_refused([](auto& w) { w["itl_ns"] = 1e6; }, "itl_ns is not");
  expect_refused([](auto& w) { w["tokens_per_s"] = 81; }, "tokens_per_s is not");
  expect_refused([](auto& w) { w["cost_per_mtok_usd"] = 0; }, "cost_per_mtok_usd must be > 0");
  expect_refused([](auto& w) { w["cost_per_mtok_usd"] = 50; }, "does not follow");
  expect_refused([](auto& w) { w["tokens_per_s_per_w"] = nullptr; }, "power_blank_reason");
  expect_refused([](auto& w) { w["outside_layers_provenance"] = "guessed"; }, "not one of");
  expect_refused([](auto& w) { w.erase("layers"); }, "missing field \"layers\"");
}

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(HB_SOURCE_DIR) + "/tests/reports/fixtures/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Reports written before the block (a /2 and a /1 file of an earlier build) still load, without
// it, and keep loading after a round trip.
TEST(WholeModel, OldReportsStillLoadWithoutTheBlock) {
  for (const char* name :
       {"report-v2-before-whole-model.json", "report-v1-before-whole-model.json"}) {
    const std::string text = fixture(name);
    ASSERT_FALSE(text.empty()) << name;
    ASSERT_EQ(text.find("whole_model"), std::string::npos);
    const Report r = from_json_text(text, name);
    ASSERT_FALSE(r.points.empty());
    for (const auto& p : r.points) EXPECT_FALSE(p.whole_model.has_value()) << name;
    EXPECT_EQ(from_json_text(to_json_text(r), name).points.size(), r.points.size());
  }
}

}  // namespace
}  // namespace hb::reports
