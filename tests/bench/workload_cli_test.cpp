// `run --workload FAMILY:KNOB=VALUE,...` end to end through the binary: the knobs reach the
// generator (through the runner), the report labels the workload by its family and non-default
// knobs, and a bad knob is exit 2 before anything runs. Skipped when the binary is not built.
#include <gtest/gtest.h>

#include "reports/json_io.h"
#include "tests/cli_fixture.h"

namespace hb::bench {
namespace {

class WorkloadCli : public cli_test::CliTest {
 protected:
  // One streamingllm point at 2048 tokens: its 20% budget keeps the sinks and the last ~400
  // tokens, so it retrieves a needle only when the needle sits in that window.
  reports::Point point(const std::string& workload) {
    const std::string out = file("r.json");
    EXPECT_EQ(run("run --model qwen2.5-0.5b --seq-len 2048 --decode-steps 4 --warmup 1 "
                  "--min-samples 2 --accuracy-steps 2 --strategy streamingllm --accelerator cpu "
                  "--accelerator-threads 1 --host-threads 1 -q --workload " +
                  workload + " --out " + out),
              0)
        << out_;
    const reports::Report r = reports::read_report(out);
    EXPECT_EQ(r.points.size(), 1u);
    return r.points.empty() ? reports::Point{} : r.points[0];
  }
};

TEST_F(WorkloadCli, KnobsReachTheGeneratorAndTheLabel) {
  const reports::Point far = point("needle");  // the needle at 1/4 of the prompt: evicted
  EXPECT_EQ(far.axes.workload, "needle");
  ASSERT_TRUE(far.accuracy.has_needle());
  EXPECT_LT(far.accuracy.needle_success_rate, 0.5);
  const reports::Point near = point("needle:needle_at=0.99");  // in the recent window: kept
  EXPECT_EQ(near.axes.workload, "needle:needle_at=0.99");
  EXPECT_DOUBLE_EQ(near.accuracy.needle_success_rate, 1.0);
  // Knobs at their defaults drop out of the label; the old name reads as its family.
  EXPECT_EQ(point("llama-like:sink_mass=0.3,drift=0.25").axes.workload, "llama-like:drift=0.25");
  EXPECT_EQ(point("structured").axes.workload, "diffuse");
}

TEST_F(WorkloadCli, BadKnobIsAUsageError) {
  EXPECT_EQ(run("run --workload llama-like:sink_mass=2 --out " + file("r.json")), 2);
  EXPECT_NE(out_.find("sink_mass"), std::string::npos) << out_;
  EXPECT_NE(out_.find("<= 0.95"), std::string::npos) << out_;
  EXPECT_EQ(run("run --workload llama-like:sinks=2 --out " + file("r.json")), 2);
  EXPECT_NE(out_.find("no knob 'sinks'"), std::string::npos) << out_;
  EXPECT_EQ(run("run --workload zipf --out " + file("r.json")), 2);
}

}  // namespace
}  // namespace hb::bench
