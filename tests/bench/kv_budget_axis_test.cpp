// run --kv-budget (issue 17 part 2): one attention budget for every sparse strategy, a sweep
// axis. Parsing (tokens, shares, lists, errors), the axis multiplying the points, each sparse
// strategy attending about the budget (tolerances below), dense ones attending all, and
// attended_tokens in the JSON (round trip; optional on read), the tables, the CSV and the CLI.
// qwen2.5-0.5b in attention scope at 1k tokens keeps every sweep well under a second.
#include <gtest/gtest.h>

#include <map>

#include "core/error.h"
#include "reports/json_io.h"
#include "bench/runner.h"
#include "bench/sweep_spec.h"
#include "reports/tables.h"
#include "tests/cli_fixture.h"
#include "tests/bench/tiny_spec.h"

namespace hb::bench {
namespace {

using testing::tiny_spec;

int exit_code_of(const std::string& text) {
  try {
    parse_kv_budgets(text);
  } catch (const Error& e) {
    return e.exit_code();
  }
  return 0;
}

TEST(KvBudgetAxis, ParsesTokensSharesAndLists) {
  // Parsed once into values: "2k" and "2048" are the same budget, so giving both is refused
  // (it would run twice), and the report writes it as 2048.
  EXPECT_THROW(parse_kv_budgets("512, 2k,6%,2048"), Error);
  EXPECT_THROW(parse_kv_budgets("512,,2k"), Error);
  const std::vector<KvBudget> budgets = parse_kv_budgets("512, 2k,6%");
  std::vector<std::string> text;
  for (const KvBudget& b : budgets) text.push_back(b.to_string());
  EXPECT_EQ(text, (std::vector<std::string>{"512", "2048", "6%"}));
  EXPECT_EQ(budgets[1].unit, KvBudget::Unit::tokens);
  EXPECT_EQ(budgets[2].unit, KvBudget::Unit::percent);
  EXPECT_EQ(budgets[2].percent, 6.0);
  EXPECT_EQ(parse_kv_budget("2k").tokens_at(32768), 2048);  // tokens whatever the context
  EXPECT_EQ(parse_kv_budget("6%").tokens_at(32768), 1966);  // 6% of 32768 = 1966.08, nearest
  EXPECT_EQ(parse_kv_budget("100%").tokens_at(4096), 4096);
  EXPECT_EQ(parse_kv_budget("0.001%").tokens_at(100), 1);  // never below one token
  EXPECT_EQ(parse_kv_budget("12.5%").to_string(), "12.5%");
  for (const char* bad : {"0", "-5", "0%", "101%", "nan%", "inf%", "abc", "12x", "%", "", " , "})
    EXPECT_EQ(exit_code_of(bad), kExitUsage) << "'" << bad << "'";
}

TEST(KvBudgetAxis, MultipliesThePointsAndLabelsThem) {
  SweepSpec spec = tiny_spec({512});
  spec.strategies = {"h2o", "full-gpu"};
  spec.kv_budgets = parse_kv_budgets("64,25%");
  const reports::Report r = run_sweep(spec, RunEnvironment{});
  ASSERT_EQ(r.points.size(), 4u);
  EXPECT_EQ(r.context.sweep.at("kv_budget"), "64,25%");
  std::map<std::string, int> per_budget;
  for (const auto& p : r.points) {
    ASSERT_EQ(p.status, reports::PointStatus::ok) << p.reason;
    ++per_budget[p.axes.extra.at("kv_budget")];
    ASSERT_TRUE(p.attended_tokens.has_value());
    if (p.axes.strategy == "full-gpu") {
      EXPECT_EQ(p.strategy_params.at("kv_budget_mapping"),
                "dense: attends all (--kv-budget ignored)");
      EXPECT_GT(p.attended_tokens->min, 512);  // the whole context
    } else {
      const int64_t budget = p.axes.extra.at("kv_budget") == "64" ? 64 : 128;  // 25% of 512
      EXPECT_EQ(p.strategy_params.at("budget_tokens"), std::to_string(budget));
      EXPECT_EQ(p.attended_tokens->max, budget);
    }
  }
  EXPECT_EQ(per_budget, (std::map<std::string, int>{{"25%", 2}, {"64", 2}}));
  // Without --kv-budget the axes carry none (old reports still compare) and nothing is echoed.
  spec.kv_budgets.clear();
  const reports::Report plain = run_sweep(spec, RunEnvironment{});
  ASSERT_EQ(plain.points.size(), 2u);
  EXPECT_FALSE(plain.points[0].axes.extra.count("kv_budget"));
  EXPECT_FALSE(plain.context.sweep.count("kv_budget"));
  EXPECT_FALSE(plain.points[0].strategy_params.count("kv_budget_mapping"));
}

// Tolerances, per strategy, on the tokens attended per (sequence, query head, scored step):
//   h2o, streamingllm: exact (heavy + recent + the new token; sinks + window).
//   quest: floor(budget / page) pages with the current page partly filled: [budget - page, budget].
//   hybridgen: accelerator pages (the newest partly filled; no hot slot at this size) + top-k:
//     [budget - page, budget].
//   infinigen: a cap only (its k is the mean count within alpha of the best speculated logit):
//     at most the budget; with alpha large enough that every token counts, exactly the budget.
TEST(KvBudgetAxis, EachSparseStrategyAttendsItsBudget) {
  SweepSpec spec = tiny_spec({1024});
  spec.strategies = {"h2o", "streamingllm", "quest", "infinigen", "hybridgen"};
  spec.kv_budgets = parse_kv_budgets("256");
  spec.accuracy_steps = -1;
  const int64_t B = 256, P = spec.page_tokens;
  const reports::Report r = run_sweep(spec, RunEnvironment{});
  ASSERT_EQ(r.points.size(), 5u);
  for (const auto& p : r.points) {
    SCOPED_TRACE(p.axes.strategy);
    ASSERT_EQ(p.status, reports::PointStatus::ok) << p.reason;
    ASSERT_TRUE(p.attended_tokens.has_value());
    EXPECT_FALSE(p.strategy_params.at("kv_budget_mapping").empty());
    EXPECT_NE(p.strategy_params.at("kv_budget_mapping").rfind("dense", 0), 0u);
    const auto& a = *p.attended_tokens;
    EXPECT_LE(a.min, a.mean);
    EXPECT_LE(a.mean, a.max);
    const std::string& s = p.axes.strategy;
    if (s == "h2o" || s == "streamingllm") {
      EXPECT_EQ(a.min, B);
      EXPECT_EQ(a.max, B);
    } else if (s == "quest" || s == "hybridgen") {
      EXPECT_GE(a.min, B - P);
      EXPECT_LE(a.max, B);
    } else {  // infinigen
      EXPECT_GE(a.min, 2);
      EXPECT_LE(a.max, B);
    }
  }
  spec.strategies = {"infinigen"};
  spec.strategy_options["infinigen.alpha"] = "1000";
  const reports::Report all_count = run_sweep(spec, RunEnvironment{});
  ASSERT_EQ(all_count.points.size(), 1u);
  ASSERT_TRUE(all_count.points[0].attended_tokens.has_value());
  EXPECT_EQ(all_count.points[0].attended_tokens->min, B);
  EXPECT_EQ(all_count.points[0].attended_tokens->max, B);
}

TEST(KvBudgetAxis, AnOptionSettingTheSameBudgetDeclinesThePoint) {
  SweepSpec spec = tiny_spec({512});
  spec.strategies = {"streamingllm"};
  spec.kv_budgets = parse_kv_budgets("64");
  spec.strategy_options["streamingllm.window"] = "100";
  const reports::Report r = run_sweep(spec, RunEnvironment{});
  ASSERT_EQ(r.points.size(), 1u);
  EXPECT_EQ(r.points[0].status, reports::PointStatus::unsupported);
  EXPECT_NE(r.points[0].reason.find("--kv-budget"), std::string::npos) << r.points[0].reason;
}

TEST(KvBudgetAxis, AttendedTokensInJsonTablesAndCsv) {
  SweepSpec spec = tiny_spec({512});
  spec.strategies = {"streamingllm"};
  spec.kv_budgets = parse_kv_budgets("64");
  const reports::Report r = run_sweep(spec, RunEnvironment{});
  ASSERT_EQ(r.points.size(), 1u);
  const std::string text = reports::to_json_text(r);
  EXPECT_NE(text.find("\"attended_tokens\""), std::string::npos);
  const reports::Report back = reports::from_json_text(text, "test");
  ASSERT_TRUE(back.points[0].attended_tokens.has_value());
  EXPECT_EQ(back.points[0].attended_tokens->min, 64);
  EXPECT_EQ(back.points[0].attended_tokens->max, 64);
  EXPECT_DOUBLE_EQ(back.points[0].attended_tokens->mean, r.points[0].attended_tokens->mean);
  // Optional on read: a report from before the field existed still parses, without it.
  reports::Report old = r;
  old.points[0].attended_tokens.reset();
  const std::string old_text = reports::to_json_text(old);
  EXPECT_EQ(old_text.find("\"attended_tokens\""), std::string::npos);
  EXPECT_FALSE(reports::from_json_text(old_text, "old").points[0].attended_tokens.has_value());
  EXPECT_NE(reports::markdown_report(r).find("attended 64"), std::string::npos);
  const std::string csv = reports::csv_report(r);
  EXPECT_NE(csv.find("attended_tokens_mean,attended_tokens_min,attended_tokens_max"),
            std::string::npos);
  EXPECT_NE(csv.find(",64,64,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("kv_budget=64"), std::string::npos);
}

class KvBudgetCli : public cli_test::CliTest {};

TEST_F(KvBudgetCli, SweepsTheBudgetsAndRefusesBadOnes) {
  const std::string out = file("r.json");
  ASSERT_EQ(run("run --scope attention --model qwen2.5-0.5b --seq-len 512 --decode-steps 3 "
                "--warmup 1 --min-samples 2 --accuracy-steps 1 --strategy streamingllm "
                "--accelerator cpu --accelerator-threads 1 --host-threads 1 --kv-budget 64,10% "
                "--out " +
                out),
            0)
      << out_;
  const reports::Report r = reports::read_report(out);
  ASSERT_EQ(r.points.size(), 2u);
  EXPECT_EQ(r.points[1].attended_tokens->max, 51);  // 10% of 512
  EXPECT_NE(stdout_.find("attended"), std::string::npos) << stdout_;
  EXPECT_NE(stdout_.find("budget"), std::string::npos) << stdout_;
  for (const char* bad : {"0", "120%", "nan%", "lots"}) {
    EXPECT_EQ(run(std::string("run --kv-budget ") + bad + " --out " + file("bad.json")), 2) << bad;
    EXPECT_NE(out_.find("--kv-budget"), std::string::npos) << out_;
  }
  EXPECT_EQ(run("run --help"), 0);
  EXPECT_NE(out_.find("--kv-budget"), std::string::npos);
}

}  // namespace
}  // namespace hb::bench
