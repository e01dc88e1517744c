// run --layers N in reports (reports/layer_stack.h): the shortcut's error against hand-computed
// values, paired and unpaired; the optional JSON field (old reports load, bad ones are refused);
// the table and the sentence `run` and `report` print.
#include "reports/layer_stack.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "fixtures.h"
#include "reports/json_io.h"
#include "reports/tables.h"

namespace hb::reports {
namespace {

// A point of 3 rounds of 2 steps (round medians 101, 200, 52 ns) and a stack of 4 whose round
// medians are 4 x those x 1.05, 0.98 and 1.10.
Point stacked_point() {
  Point p = testing::make_point("quest", 4096, 100);
  static_cast<Timing&>(p.step) = Timing::from_samples({100, 102, 200, 200, 50, 54});
  p.step.pass_sizes = {2, 2, 2};
  p.step.round_slots = {0, 1, 0};
  LayerStackFigures& s = p.layer_stack;
  s.layers = 4;
  static_cast<Timing&>(s.step) =
      Timing::from_samples({424.2, 424.2, 780, 788, 228.8, 228.8});  // 424.2 = 4 x 101 x 1.05
  s.step.pass_sizes = {2, 2, 2};
  s.step.stop_reason = StopReason::max_steps;
  s.phases["cpu"] = Timing::from_samples({300, 310, 320, 330, 340, 350});
  update_shortcut_error(p);
  return p;
}

TEST(LayerStackFigures, ShortcutErrorIsTheMedianOfPairedRoundRatios) {
  const Point p = stacked_point();
  const LayerStackFigures& s = p.layer_stack;
  ASSERT_TRUE(s.shortcut_error.has_value());
  EXPECT_NEAR(*s.shortcut_error, 0.05, 1e-12);  // ratios 1.05, 0.98, 1.10: median 1.05
  EXPECT_NEAR(s.error_low, -0.02, 1e-12);       // 3 rounds: [min, max]
  EXPECT_NEAR(s.error_high, 0.10, 1e-12);
  EXPECT_NEAR(s.coverage, 0.75, 1e-12);  // 1 - 2 P(Bin(3, 1/2) < 1)
  EXPECT_EQ(s.rounds, 3);
  EXPECT_EQ(shortcut_error_cell(p), "+5.0% [-2.0%, +10.0%]");
}

TEST(LayerStackFigures, UnpairedErrorComesFromTheMediansWithoutInterval) {
  Point p = stacked_point();
  p.step.pass_sizes.clear();  // one round: nothing to pair
  p.step.round_slots.clear();
  update_shortcut_error(p);
  // Stack median (424.2 + 424.2 ... sorted: 228.8 228.8 424.2 424.2 780 788) = 424.2; point
  // median (50 54 100 102 200 200) = 101.
  EXPECT_NEAR(*p.layer_stack.shortcut_error, 424.2 / (4 * 101.0) - 1, 1e-12);
  EXPECT_EQ(p.layer_stack.rounds, 0);
  EXPECT_EQ(shortcut_error_cell(p), "+5.0%");
  // A stack that did not run, or a point that did not time, has no error.
  p.layer_stack.status = PointStatus::oom;
  update_shortcut_error(p);
  EXPECT_FALSE(p.layer_stack.shortcut_error.has_value());
  EXPECT_EQ(layer_stack_time_cell(p), "oom");
  EXPECT_EQ(shortcut_error_cell(p), "-");
}

TEST(LayerStackFigures, RoundTripsAndIsOptional) {
  Report r = testing::make_report();
  r.points[0] = stacked_point();
  const std::string text = to_json_text(r);
  const Report back = from_json_text(text, "mem");
  const LayerStackFigures& s = back.points[0].layer_stack;
  ASSERT_TRUE(s.present());
  EXPECT_EQ(s.layers, 4);
  EXPECT_EQ(s.step.samples_ns, r.points[0].layer_stack.step.samples_ns);
  EXPECT_EQ(s.step.pass_sizes, r.points[0].layer_stack.step.pass_sizes);
  EXPECT_EQ(s.shortcut_error, r.points[0].layer_stack.shortcut_error);
  EXPECT_EQ(s.rounds, 3);
  EXPECT_EQ(s.phases.at("cpu").samples_ns, r.points[0].layer_stack.phases.at("cpu").samples_ns);
  EXPECT_FALSE(back.points[1].layer_stack.present()) << "absent where not run";
  EXPECT_EQ(to_json_text(back), text);
  EXPECT_EQ(nlohmann::json::parse(text)["points"][1].count("layer_stack"), 0u);

  auto refused = [&](const char* key, nlohmann::json value, const char* says) {
    nlohmann::json j = nlohmann::json::parse(text);
    j["points"][0]["layer_stack"][key] = value;
    try {
      from_json_text(j.dump(), "bad.json");
      ADD_FAILURE() << key << " accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), kExitUsage);
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  refused("layers", 1, "at least 2 layers");
  refused("scored_layer", 4, "one of the stack's");
  refused("status", "fine", "status");
  refused("shortcut_error", nullptr, "interval without its error");
}

TEST(LayerStackFigures, TableAndSentenceSayTheErrorAndTheScoredLayer) {
  Report r = testing::make_report();
  EXPECT_EQ(layer_stack_table(r).rows(), 0u);
  EXPECT_EQ(layer_stack_sentence(r), "") << "no stacks, nothing said";
  EXPECT_EQ(markdown_report(r).find("Whole model"), std::string::npos);
  r.points[0] = stacked_point();
  Point far = stacked_point();
  far.axes.strategy = "h2o";
  far.layer_stack.step = {};
  static_cast<Timing&>(far.layer_stack.step) = Timing::from_samples({606});  // 606 / 404 = 1.5
  far.layer_stack.step.stop_reason = StopReason::max_steps;
  update_shortcut_error(far);
  r.points.push_back(far);
  const std::string table = layer_stack_table(r).plain();
  EXPECT_NE(table.find("+5.0% [-2.0%, +10.0%]"), std::string::npos) << table;
  EXPECT_NE(table.find("+50.0%"), std::string::npos) << table;
  const std::string s = layer_stack_sentence(r);
  EXPECT_NE(s.find("--layers 4"), std::string::npos) << s;
  EXPECT_NE(s.find("to +50.0% (h2o at 4k)"), std::string::npos) << s;
  EXPECT_NE(s.find("Beyond ±10.0%: h2o at 4k (+50.0%)"), std::string::npos) << s;
  EXPECT_NE(s.find("layer 0"), std::string::npos) << s;
  const std::string md = markdown_report(r);
  EXPECT_NE(md.find("## Whole model: measured layer stack vs layers x one layer"),
            std::string::npos);
  EXPECT_NE(md.find("| quest"), std::string::npos);
}

}  // namespace
}  // namespace hb::reports
