#include "model/step_pricer.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "bench/sweep_spec.h"

namespace hb::model {
namespace {

class Idle final : public Strategy {
 public:
  std::string name() const override { return "idle"; }
  PlanResult plan(const Problem&, const Platform&) override { return {}; }
  void load() override {}
  void step(int, StepResult&) override {}
};

PlatformModel toy() {
  PlatformModel m;
  m.name = "toy";
  m.accelerator.kind = "cuda";
  return m;
}

// Prices a step at its h2d bytes (1 ns a byte) in one phase; step 0 is left unpriced.
StepPrice by_h2d(const reports::PointAxes&, const Strategy&, int s, const Traffic& t) {
  if (s == 0) return {};
  return {static_cast<double>(t.h2d_bytes), {{"transfer", static_cast<double>(t.h2d_bytes)}}, "o"};
}

bench::RecordedStep measured(int64_t ns, int64_t h2d) {
  bench::RecordedStep r{ns, {{"measured", ns}}, {}};
  r.traffic.h2d_bytes = h2d;
  return r;
}

TEST(StepPricer, ReplacingPutsThePriceInPlaceOfTheTimingAndLabelsThePoint) {
  const auto pricer = make_step_pricer(toy(), {.replace = true, .price = by_h2d});
  EXPECT_TRUE(pricer->replaces_timing());
  reports::Point p;
  pricer->label(p);
  EXPECT_EQ(p.provenance, reports::Provenance::modeled);
  EXPECT_EQ(p.axes.accelerator, "cuda");
  EXPECT_EQ(p.axes.extra.at("platform"), "toy");
  Idle s;
  auto record = pricer->observe(p, s, 1);
  EXPECT_EQ(p.strategy_params.at("model.platform"), "toy");
  bench::RecordedStep r = measured(999, 1500);
  record->on_step(s, 1, true, r);
  EXPECT_EQ(r.total_ns, 1500);
  EXPECT_EQ(r.phase_ns, (std::map<std::string, int64_t>{{"transfer", 1500}}));
}

TEST(StepPricer, ObservingKeepsTheTimingAndReportsPricesOnlyWhenEveryTimedStepHasOne) {
  const auto pricer =
      make_step_pricer(toy(), {.replace = false, .annotate = false, .price = by_h2d});
  EXPECT_FALSE(pricer->replaces_timing());
  EXPECT_TRUE(pricer->lane_axes().empty());
  Idle s;
  for (const bool first_timed : {false, true}) {
    reports::Point p;
    pricer->label(p);
    EXPECT_EQ(p.provenance, reports::Provenance::measured);
    auto record = pricer->observe(p, s, 1);
    EXPECT_TRUE(p.strategy_params.empty());
    for (int step = 0; step < 3; ++step) {
      bench::RecordedStep r = measured(1000, 100 * (step + 1));
      // Step 0 has no price: a warm-up step (untimed) or, timed, a step the model missed.
      const bool timed = step > 0 || first_timed;
      record->on_step(s, step, timed, r);
      EXPECT_EQ(r.total_ns, 1000);
      if (timed) p.step.samples_ns.push_back(1000);
    }
    p.step.summary.median = 1000;
    record->finish(p);
    if (first_timed) {
      EXPECT_FALSE(p.modeled.present());
      continue;
    }
    ASSERT_TRUE(p.modeled.present());
    EXPECT_EQ(p.modeled.platform, "toy");
    EXPECT_EQ(p.modeled.step.samples_ns, (std::vector<double>{200, 300}));
    EXPECT_NEAR(p.modeled.error_vs_measured, -0.75, 1e-12);
  }
}

TEST(StepPricer, ASampledBatchIsRecordedAndPricedWithTheBatchsTraffic) {
  bench::SweepSpec spec;
  const auto pricer = make_step_pricer(toy(), {.price = by_h2d, .sweep = &spec});
  Idle s;
  reports::Point p;
  auto record = pricer->observe(p, s, 4);
  bench::RecordedStep r = measured(1000, 100);
  record->on_step(s, 1, true, r);
  Traffic one;
  one.h2d_bytes = 100;
  EXPECT_EQ(r.traffic.h2d_bytes, one.for_batch(4).h2d_bytes);
  EXPECT_GT(r.traffic.h2d_bytes, 100);
  EXPECT_EQ(r.total_ns, r.traffic.h2d_bytes);
  // Without the sweep a batch cannot be made: the caller's bug, not a silent single sequence.
  const auto blind = make_step_pricer(toy(), {.price = by_h2d});
  EXPECT_THROW(blind->observe(p, s, 4), std::logic_error);
}

}  // namespace
}  // namespace hb::model
