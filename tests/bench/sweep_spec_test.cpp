// What a sweep may ask for (bench/sweep_spec): ranges are counted before they are built,
// list items and strategy options are parsed strictly, and validate() refuses values no front
// end should let through (issue 14, defects 5 and 7).
#include "bench/sweep_spec.h"

#include <chrono>
#include <functional>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <variant>

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/strategy.h"
#include "core/thread_pool.h"

namespace hb::bench {
namespace {

std::string problem_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage) << e.problem();
    return e.problem();
  }
  return "(accepted)";
}

TEST(SweepSpecLimits, HugeRangesAreRefusedBeforeBeingBuilt) {
  const auto start = std::chrono::steady_clock::now();
  // The first grew without limit (gigabytes), the second looped forever (signed overflow).
  EXPECT_NE(problem_of([] { parse_seq_lens("1:1000000000000:+1"); }).find("--seq-len"),
            std::string::npos);
  EXPECT_NE(problem_of([] { parse_seq_lens("1:1000000000000:+1"); }).find("1000000000000 points"),
            std::string::npos)
      << "too many points (counted): " << problem_of([] { parse_seq_lens("1:1000000000000:+1"); });
  EXPECT_NE(problem_of([] {
              parse_seq_lens("1:9223372036854775807:+4611686018427387904");
            }).find("--seq-len"),
            std::string::npos);
  EXPECT_NE(problem_of([] { parse_seq_lens("1:1m:+1"); }).find("1048576 points"),
            std::string::npos);
  EXPECT_NE(problem_of([] { parse_seq_lens("1:1000000:x1.000001"); }).find("more than 10000"),
            std::string::npos);
  EXPECT_NE(problem_of([] { parse_seq_lens("1:20000:+1"); }).find("20000 points"),
            std::string::npos);
  // Many small items add up to the same limit.
  std::string many;
  for (int i = 1; i <= 10001; ++i) many += (i > 1 ? "," : "") + std::to_string(i);
  EXPECT_NE(problem_of([&] { parse_seq_lens(many); }).find("more than 10000"), std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST(SweepSpecLimits, RangesAtTheLimitStillWork) {
  EXPECT_EQ(parse_seq_lens("1:10000:+1").size(), 10000u);
  EXPECT_EQ(parse_seq_lens("1k:1m:x2").back(), 1 << 20);
  EXPECT_EQ(parse_seq_lens("4k:32k:x2"), (std::vector<int64_t>{4096, 8192, 16384, 32768}));
  EXPECT_EQ(parse_seq_lens("1k:3k:+1k, 100"), (std::vector<int64_t>{100, 1024, 2048, 3072}));
  EXPECT_EQ(parse_seq_lens("1099511627776"), (std::vector<int64_t>{kMaxTokens}));
}

TEST(SweepSpecLimits, RangeFactorsAndStepsAreStrict) {
  for (const char* bad : {"1:1000:xnan", "1:1000:xabc", "1:1000:xinf", "1:1000:x1", "1:1000:x2x",
                          "1:1000:+0", "1:1000:+1.5", "1:1000:+abc", "0", "0:8:x2", "4q", "4k:8k",
                          "4k:1k:x2", "", "-4k", "1099511627777"}) {
    const std::string p = problem_of([&] { parse_seq_lens(bad); });
    EXPECT_NE(p, "(accepted)") << bad;
    EXPECT_NE(p.find("--seq-len"), std::string::npos) << bad << ": " << p;
  }
  EXPECT_NE(problem_of([] { parse_seq_lens("1:1000:xnan"); }).find("'nan'"), std::string::npos);
  EXPECT_NE(problem_of([] { parse_seq_lens("0", "--other"); }).find("--other"), std::string::npos);
}

TEST(SweepSpecLimits, BatchesAreWholeNumbersInRange) {
  EXPECT_EQ(parse_batches("1, 4,16"), (std::vector<int>{1, 4, 16}));
  EXPECT_EQ(parse_batches("4096"), (std::vector<int>{4096}));
  for (const char* bad : {"2x", "1.9", "0", "-1", "4097", "1e3", "", ",", "99999999999"}) {
    const std::string p = problem_of([&] { parse_batches(bad); });
    EXPECT_NE(p, "(accepted)") << bad;
    EXPECT_NE(p.find("batch"), std::string::npos) << bad << ": " << p;
  }
  EXPECT_NE(problem_of([] { parse_batches("2x"); }).find("'2x'"), std::string::npos);
}

TEST(SweepSpecLimits, StrategyOptionsAreFinite) {
  EXPECT_EQ(parse_strategy_option("h2o.heavy_ratio=0.2"),
            (std::pair<std::string, std::string>{"h2o.heavy_ratio", "0.2"}));
  EXPECT_EQ(parse_strategy_option("quest.mode=fast").second, "fast");  // text options stay text
  for (const char* bad :
       {"h2o.heavy_ratio=nan", "h2o.heavy_ratio=inf", "h2o.heavy_ratio=-Infinity",
        "h2o.heavy_ratio=1e999", "heavy_ratio=0.2", "h2o=0.2", "h2o.heavy_ratio"}) {
    const std::string p = problem_of([&] { parse_strategy_option(bad); });
    EXPECT_NE(p.find("--opt"), std::string::npos) << bad << ": " << p;
  }
  // Where strategies read them: the whole value, finite.
  for (const char* bad : {"nan", "inf", "0.2x", " "}) {
    StrategyOptions o(std::map<std::string, std::string>{{"h2o.heavy_ratio", bad}});
    const std::string p = problem_of([&] { o.number("h2o", "heavy_ratio", 0.1); });
    EXPECT_NE(p.find("--opt h2o.heavy_ratio"), std::string::npos) << bad << ": " << p;
  }
  EXPECT_DOUBLE_EQ(StrategyOptions(std::map<std::string, std::string>{{"h2o.heavy_ratio", "0.25"}})
                       .number("h2o", "heavy_ratio", 0.1),
                   0.25);
}

TEST(SweepSpecLimits, ValidateRefusesNonFiniteAndOutOfRange) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto refused = [](const std::function<void(SweepSpec&)>& set, const char* option) {
    SweepSpec s;
    set(s);
    const std::string p = problem_of([&] { s.validate(); });
    EXPECT_NE(p.find(option), std::string::npos) << option << ": " << p;
  };
  refused([&](SweepSpec& s) { s.stop.max_noise = nan; }, "--max-noise");
  refused([&](SweepSpec& s) { s.stop.timeout_s = nan; }, "--timeout");
  refused([&](SweepSpec& s) { s.stop.min_time_s = nan; }, "--min-time");
  refused([&](SweepSpec& s) { s.stop.warmup_steps = -5; }, "--warmup");
  refused([&](SweepSpec& s) { s.accuracy_steps = -2; }, "--accuracy-steps");
  refused([&](SweepSpec& s) { s.workload = "llama-like:sink_mass=2"; }, "sink_mass");
  refused([&](SweepSpec& s) { s.workload = "needle:decay=nan"; }, "decay");
  refused([&](SweepSpec& s) { s.decode_steps = kMaxDecodeSteps + 1; }, "--decode-steps");
  const int cpus = static_cast<int>(allowed_cpus().size());
  refused([&](SweepSpec& s) { s.host_threads = 200000; }, "--host-threads");
  refused([&](SweepSpec& s) { s.host_threads = cpus + 1; }, "--host-threads");
  refused([&](SweepSpec& s) { s.accelerator.cpu_threads = cpus + 1; }, "--accelerator-threads");
  refused([&](SweepSpec& s) { s.accelerator.cpu_threads = -1; }, "--accelerator-threads");
  refused([&](SweepSpec& s) { s.kv_budgets = {KvBudget{}}; }, "--kv-budget");  // 0 tokens
  refused([&](SweepSpec& s) { s.kv_dtypes.clear(); }, "no KV element type");
  refused([&](SweepSpec& s) { s.workload = "trace:/nonexistent/t.safetensors"; },
          "/nonexistent/t.safetensors");
  SweepSpec ok;
  ok.host_threads = cpus;
  ok.accelerator.cpu_threads = cpus;
  EXPECT_NO_THROW(ok.validate());
}

// Issue 35: every value of the sweep is parsed once, into a type; text again only for the report.
TEST(SweepSpecResolved, ValuesAreParsedOnceIntoTypes) {
  EXPECT_EQ(parse_kv_dtypes("fp16, bf16,float32"),
            (std::vector<DType>{DType::f16, DType::bf16, DType::f32}));
  EXPECT_NE(problem_of([] { parse_kv_dtypes("fp16,fp8"); }).find("'fp8'"), std::string::npos);
  EXPECT_NE(problem_of([] { parse_kv_dtypes(" , "); }).find("--kv-dtype"), std::string::npos);
  EXPECT_EQ(trace_path("trace:dir/t.safetensors"), "dir/t.safetensors");
  EXPECT_EQ(trace_path("llama-like"), std::nullopt);
  EXPECT_EQ(trace_path("needle"), std::nullopt);

  SweepSpec s;
  s.workload = "structured:needle=1";  // an old name and a knob: the label is the canonical one
  s.kv_dtypes = {DType::bf16, DType::f32};
  s.kv_budgets = parse_kv_budgets("64,12.5%");
  s.kv_pages = KvPages::base;
  const ResolvedSweep r = s.validate();
  ASSERT_TRUE(std::holds_alternative<WorkloadSpec>(r.workload));
  EXPECT_EQ(r.trace(), nullptr);
  EXPECT_EQ(r.workload_label(), parse_workload_spec("structured:needle=1").label());
  const auto echo = r.echo();
  EXPECT_EQ(echo.at("workload"), r.workload_label());
  EXPECT_EQ(echo.at("kv_dtypes"), "bf16,fp32");
  EXPECT_EQ(echo.at("kv_budget"), "64,12.5%");
  EXPECT_EQ(echo.at("kv_pages"), "4k");
  EXPECT_EQ(echo.count("kv_node"), 0u);  // no --kv-node: the CPU's local node, not echoed
}

// --kv-node: node numbers parsed once (a fleet run's list one per rank), text again only in the
// echo; whether a node exists is the platform's check (tests/memtier/cli_test.cpp).
TEST(SweepSpecResolved, KvNodesAreNumbers) {
  EXPECT_EQ(parse_kv_nodes(""), std::vector<int>{});
  EXPECT_EQ(parse_kv_nodes("1"), std::vector<int>{1});
  EXPECT_EQ(parse_kv_nodes("0, 7"), (std::vector<int>{0, 7}));
  EXPECT_EQ(parse_kv_nodes("65535"), std::vector<int>{65535});
  for (const char* bad : {"1x", "-1", "65536", "1.5", "0,x", "nan"}) {
    const std::string p = problem_of([&] { parse_kv_nodes(bad); });
    EXPECT_NE(p.find("--kv-node"), std::string::npos) << bad << ": " << p;
  }
  EXPECT_NE(problem_of([] { parse_kv_nodes("0,x"); }).find("'x'"), std::string::npos);
  SweepSpec s;
  s.kv_nodes = parse_kv_nodes("3,1");
  EXPECT_EQ(s.validate().echo().at("kv_node"), "3,1");
}

}  // namespace
}  // namespace hb::bench
