// HybridGen's feedback scheduler reads the platform's step times where it has them
// (core/step_times.h: model mode prices the step on the projected platform), not the wall clock.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/hybrid/rig.h"

namespace hb::test {
namespace {

// Prices a step as fixed ns per byte the CPU read and per byte the accelerator read, and keeps
// what it was asked to price.
class PerByteTimes final : public StepTimeSource {
 public:
  PerByteTimes(double cpu_ns_per_byte, double acc_ns_per_byte)
      : cpu_(cpu_ns_per_byte), acc_(acc_ns_per_byte) {}
  ResourceTimesNs price(const Traffic& t, const OverlapStructure&) const override {
    asked.push_back(t);
    return {cpu_ * static_cast<double>(t.total_read(Processor::cpu)),
            acc_ * static_cast<double>(t.total_read(Processor::accelerator)),
            static_cast<double>(t.h2d_bytes)};
  }
  std::string describe() const override { return "per byte"; }
  mutable std::vector<Traffic> asked;

 private:
  double cpu_, acc_;
};

struct Stepped {
  std::vector<StepResult> steps;
  std::vector<std::map<std::string, double>> trajectory;
  std::map<std::string, std::string> params;
};

Stepped run_steps(Rig& rig, int steps, const StepTimeSource* times) {
  rig.platform.step_times = times;
  auto hg = make_hybridgen({{"hybridgen.boundary", "fixed"}, {"hybridgen.gpu_tokens", "256"}});
  Stepped r;
  const PlanResult plan = hg->plan(rig.problem, rig.platform);
  EXPECT_EQ(plan.status, PlanStatus::ok) << plan.reason;
  r.params = plan.parameters;
  hg->load();
  for (int s = 0; s < steps; ++s) {
    hg->prepare_step(s);
    r.steps.emplace_back();
    hg->step(s, r.steps.back());
  }
  r.trajectory = hg->trajectory();
  return r;
}

const AttentionShape kShape{8, 2, 64, DType::f16};

// The scheduler's rows carry the source's prices of each step's own traffic, and its decisions
// follow them: a CPU side priced slower than the accelerator's moves the ratio down, a faster
// one moves it up, whatever the clock says.
TEST(HybridGenStepTimes, TheSchedulerBalancesThePlatformsTimes) {
  for (const bool cpu_slow : {true, false}) {
    SCOPED_TRACE(cpu_slow ? "cpu priced slower" : "cpu priced faster");
    Rig rig(kShape, 3000, 8, 1 << 20, {tier(MemoryKind::local_dram, 0)});
    const PerByteTimes times(cpu_slow ? 100.0 : 1e-3, 1.0);
    const Stepped r = run_steps(rig, 8, &times);
    EXPECT_EQ(r.params.at("scheduler.times"), "per byte");
    // Each step priced once whole and once without its rows' reads (their share of the CPU).
    ASSERT_EQ(times.asked.size(), 2 * r.steps.size());
    for (size_t s = 0; s < r.steps.size(); ++s) EXPECT_EQ(times.asked[2 * s], r.steps[s].traffic);
    ASSERT_EQ(r.trajectory.size(), 2u);  // interval 4
    for (const auto& row : r.trajectory) {
      EXPECT_GT(row.at("cpu_ns"), 0);
      EXPECT_EQ(row.at("cpu_ns") > row.at("accelerator_ns"), cpu_slow);
      EXPECT_GT(row.at("rows_ns"), 0);
      EXPECT_LT(row.at("rows_ns"), row.at("cpu_ns"));
      // Down (or held, where the rows are too small a share of the CPU side to pay), or up to
      // the ceiling.
      if (cpu_slow)
        EXPECT_TRUE(row.at("next_ratio") < row.at("ratio") || row.at("ratio_held") == 1);
      else
        EXPECT_TRUE(row.at("next_ratio") > row.at("ratio") ||
                    row.at("ratio") == row.at("ratio_ceiling"));
    }
  }
}

// Priced times make the trajectory a function of the workload alone: two runs give the same
// rows, times included (the clock's never do).
TEST(HybridGenStepTimes, PricedTrajectoriesRepeatExactly) {
  Rig a(kShape, 3000, 12, 1 << 20, {tier(MemoryKind::local_dram, 0)});
  Rig b(kShape, 3000, 12, 1 << 20, {tier(MemoryKind::local_dram, 0)});
  const PerByteTimes ta(3.0, 1.0), tb(3.0, 1.0);
  const Stepped ra = run_steps(a, 12, &ta), rb = run_steps(b, 12, &tb);
  EXPECT_EQ(ra.trajectory, rb.trajectory);
  ASSERT_EQ(ra.steps.size(), rb.steps.size());
  for (size_t s = 0; s < ra.steps.size(); ++s) EXPECT_EQ(ra.steps[s].o, rb.steps[s].o);
  // Without a source the clock's times are recorded and no source is named.
  Rig c(kShape, 3000, 4, 1 << 20, {tier(MemoryKind::local_dram, 0)});
  EXPECT_EQ(run_steps(c, 4, nullptr).params.count("scheduler.times"), 0u);
}

}  // namespace
}  // namespace hb::test
