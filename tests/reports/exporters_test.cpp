// The CI exports (reports/exporters.h) in the whole model's units where a point has them.
#include "reports/exporters.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fixtures.h"
#include "reports/labels.h"

namespace hb::reports {
namespace {

// The first point with the whole model's figures of an 80-layer model, 1 ms outside the layers.
Report with_whole_model() {
  Report r = testing::make_report();
  Point& p = r.points[0];
  WholeModel w;
  w.layers = 80;
  w.layer_step_ns = p.step.summary.median;
  w.outside_layers_ns = 1e6;
  w.itl_ns = 80 * w.layer_step_ns + 1e6;
  w.tokens_per_s = p.axes.batch * 1e9 / w.itl_ns;
  w.tokens_per_s_per_user = 1e9 / w.itl_ns;
  p.whole_model = w;
  return r;
}

// Issue 49: the Bencher export's throughput was one layer's (29 tokens/s for a model that does
// 0.79): with the whole model's figures, latency is the ITL and throughput the model's tokens/s.
TEST(Exporters, BencherCarriesTheWholeModel) {
  const Report r = with_whole_model();
  const auto& s = r.points[0].step.summary;
  const auto j = nlohmann::json::parse(bmf_json_text(r));
  const auto& m = j.at(benchmark_name(r.points[0].axes));
  const double itl = 80 * s.median + 1e6;
  EXPECT_NEAR(m.at("latency")["value"].get<double>(), itl, 1e-6 * itl);
  EXPECT_NEAR(m.at("latency")["upper_value"].get<double>(), 80 * s.p90 + 1e6, 1e-3);
  EXPECT_NEAR(m.at("throughput")["value"].get<double>(), 1e9 / itl, 1e-9);
  EXPECT_NEAR(m.at("throughput")["value"].get<double>(), r.points[0].whole_model->tokens_per_s,
              1e-9);
  EXPECT_NEAR(m.at("throughput")["lower_value"].get<double>(), 1e9 / (80 * s.p90 + 1e6), 1e-9);
  EXPECT_EQ(m.at("layer-latency")["value"].get<double>(), s.median);
  // A point without them keeps the layer's step as latency, and no layer-latency nor throughput
  // (issue 47: one layer's tokens/s is no model's).
  const auto& plain = j.at(benchmark_name(r.points[1].axes));
  EXPECT_EQ(plain.at("latency")["value"].get<double>(), r.points[1].step.summary.median);
  EXPECT_FALSE(plain.contains("layer-latency"));
  EXPECT_FALSE(plain.contains("throughput"));
}

TEST(Exporters, GithubBenchmarkAddsTheItl) {
  const Report r = with_whole_model();
  const auto j = nlohmann::json::parse(github_benchmark_json_text(r));
  const std::string name = benchmark_name(r.points[0].axes) + " ITL";
  bool found = false;
  for (const auto& e : j)
    if (e["name"] == name) {
      found = true;
      EXPECT_EQ(e["unit"], "ns");
      EXPECT_NEAR(e["value"].get<double>(), 80 * r.points[0].step.summary.median + 1e6, 1e-3);
    }
  EXPECT_TRUE(found) << j.dump(1);
  EXPECT_EQ(j.size(), 11u);  // step time + rel_l2 for each of the 5 timed points, one ITL
}

}  // namespace
}  // namespace hb::reports
