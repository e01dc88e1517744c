// A point is "oom" because memory ran out (hb::CapacityError), never because an error's text
// happens to say "capacity": the runner catches the type (bench/contender.cpp).
#include <gtest/gtest.h>

#include "core/error.h"
#include "bench/runner.h"
#include "tests/bench/tiny_spec.h"

namespace hb::bench {
namespace {

// "throws": plan() throws what throws.kind says: 1 = a CapacityError whose text never says
// "capacity", 2 = a plain Error whose text does.
class Throws final : public Strategy {
 public:
  explicit Throws(const StrategyOptions& o)
      : kind_(static_cast<int>(o.number("throws", "kind", 1))) {}
  std::string name() const override { return "throws"; }
  PlanResult plan(const Problem&, const Platform&) override {
    if (kind_ == 1) throw CapacityError("out of room for the KV", "ask for fewer tokens", 1);
    throw Error("the capacity of this strategy's patience is exceeded", "none", 1);
  }
  void load() override {}
  void step(int, StepResult&) override {}

 private:
  int kind_;
};

reports::Point throws_point(int kind) {
  SweepSpec spec = testing::tiny_spec({100});
  StrategyRegistry::instance().add(
      {"throws", "throws on purpose in plan (tests)", "test",
       [](const StrategyOptions& o) { return std::make_unique<Throws>(o); }});
  spec.strategies = {"throws"};
  spec.strategy_options = {{"throws.kind", std::to_string(kind)}};
  const reports::Report r = run_sweep(spec, RunEnvironment{});
  EXPECT_EQ(r.points.size(), 1u);
  return r.points.empty() ? reports::Point{} : r.points[0];
}

TEST(CapacityStatus, CapacityErrorIsOomWhateverItsText) {
  const reports::Point p = throws_point(1);
  EXPECT_EQ(p.status, reports::PointStatus::oom);
  EXPECT_EQ(p.reason, "out of room for the KV");
  EXPECT_EQ(p.step.stop_reason, reports::StopReason::none);
}

TEST(CapacityStatus, PlainErrorSayingCapacityIsAnError) {
  const reports::Point p = throws_point(2);
  EXPECT_EQ(p.status, reports::PointStatus::error);
  EXPECT_EQ(p.reason, "the capacity of this strategy's patience is exceeded");
}

}  // namespace
}  // namespace hb::bench
