// Issue 35 part 3: the sweep's values are parsed once into types (KV dtypes, --kv-budget,
// --kv-pages, the workload with its trace opened once). For a fixed seed `run` gives the points
// the text-typed code gave: reports written by that code (integration 852f630) are the fixtures,
// tests/bench/fixtures/typed_sweep_*_before.json, and the trace is
// tests/bench/fixtures/tiny_trace.safetensors (4 q heads, 2 KV heads x 16, 160 tokens, 8 steps).
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "reports/json_io.h"
#include "tests/bench/same_point.h"
#include "tests/cli_fixture.h"

namespace hb::bench {
namespace {

const std::string kSampling =
    " --decode-steps 6 --warmup 1 --min-samples 3 --rounds 5 --max-samples 5 --accuracy-steps 2 "
    "--seed 42 --accelerator cpu --accelerator-threads 1 --host-threads 1 --repetitions 1 "
    "--timeout 30";

// Two budgets (a count and a share) x two KV dtypes x two batches, attention scope.
const std::string kBudgetArgs =
    "run -q --model qwen2.5-0.5b --seq-len 256 --batch 1,2 --kv-budget 64,25% "
    "--kv-dtype bf16,fp16 --strategy h2o,quest,streamingllm,infinigen --scope attention" +
    kSampling;

// A trace run on the trace's own model (its length, dtype and attention scope adopted).
const std::string kTraceArgs =
    "run -q --strategy full-gpu,cpu-only,h2o,quest,streamingllm --kv-budget 32" + kSampling +
    " --workload trace:" + std::string(HB_SOURCE_DIR) +
    "/tests/bench/fixtures/tiny_trace.safetensors";

std::string fixture(const std::string& name) {
  return std::string(HB_SOURCE_DIR) + "/tests/bench/fixtures/" + name;
}

class TypedSweepCli : public cli_test::CliTest {
 protected:
  // Runs `args`, then compares its points, one by one, and its echo (but `skip`) with `before`.
  void expect_same_report(const std::string& args, const std::string& before_name,
                          const std::string& skip = "") {
    const reports::Report before = reports::read_report(fixture(before_name));
    const std::string out = file("r.json");
    ASSERT_EQ(run(args + " --out " + out), 0) << out_;
    const reports::Report now = reports::read_report(out);
    testing::expect_same_points(now, before);
    auto echo = [&](std::map<std::string, std::string> e) {
      e.erase(skip);
      e.erase("tie_margin_fraction");  // echoed since issue 33's --tie-margin, after the fixtures
      return e;
    };
    EXPECT_EQ(echo(now.context.sweep), echo(before.context.sweep));
  }
};

TEST_F(TypedSweepCli, BudgetsAndDtypesGiveThePointsOfTheTextTypedCode) {
  expect_same_report(kBudgetArgs, "typed_sweep_budget_before.json");
}

TEST_F(TypedSweepCli, ATraceGivesThePointsOfTheTextTypedCode) {
  // The echo keeps the trace's path as given, which is this checkout's.
  expect_same_report(kTraceArgs, "typed_sweep_trace_before.json", "workload");
}

}  // namespace
}  // namespace hb::bench
