// --opt STRATEGY.KEY=VALUE numbers go through one checked conversion (core/parse.h through
// StrategyOptions::count / number): a count that is fractional (2048.7), in exponent form or too
// large for any integer (1e19), or outside its range is refused naming the option, the value
// and the range. Before, strategies cast a double: quest.budget=1e19 ran with 48 tokens,
// offload.chunk_tokens=1e19 recorded -9223372036854775792, 2048.7 was truncated to 2048.
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/strategy.h"

namespace hb {
namespace {

std::string refusal(const std::string& value, int64_t min = 1, int64_t max = kMaxOptionTokens) {
  const StrategyOptions o(std::map<std::string, std::string>{{"quest.budget", value}});
  try {
    o.count("quest", "budget", 2048, min, max);
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage);
    return e.problem() + " | " + e.fix();
  }
  return "";
}

TEST(StrategyOptionCount, AcceptsWholeCountsWithTheirSuffixes) {
  const StrategyOptions o(std::map<std::string, std::string>{
      {"quest.budget", "4096"}, {"h2o.heavy", "4k"}, {"streamingllm.sinks", "0"}});
  EXPECT_EQ(o.count("quest", "budget", 2048, 1, kMaxOptionTokens), 4096);
  EXPECT_EQ(o.count("h2o", "heavy", -1, 0, kMaxOptionTokens), 4096);
  EXPECT_EQ(o.count("streamingllm", "sinks", 4, 0, kMaxOptionTokens), 0);
  EXPECT_EQ(o.count("h2o", "recent", -1, 0, kMaxOptionTokens), -1);  // not given: the default
}

TEST(StrategyOptionCount, RefusesWhatNoCountIs) {
  for (const char* bad :
       {"1e19", "2048.7", "1e3", "9223372036854775808", "nan", "inf", "-5", "0", "2x", ""}) {
    const std::string why = refusal(bad);
    EXPECT_NE(why, "") << bad << " was accepted";
    EXPECT_NE(why.find("--opt quest.budget"), std::string::npos) << why;
    EXPECT_NE(why.find("1099511627776"), std::string::npos) << "the range is named: " << why;
  }
  EXPECT_NE(refusal("2049", 1, 2048), "");  // above its own maximum
}

TEST(StrategyOptionNumber, RefusesValuesOutsideTheirRange) {
  const StrategyOptions o(std::map<std::string, std::string>{{"h2o.heavy_ratio", "1.5"}});
  EXPECT_THROW(o.number("h2o", "heavy_ratio", 0.1, parse::RealRange::between(0, 1)), Error);
  const StrategyOptions ok(std::map<std::string, std::string>{{"h2o.heavy_ratio", "0.25"}});
  EXPECT_EQ(ok.number("h2o", "heavy_ratio", 0.1, parse::RealRange::between(0, 1)), 0.25);
}

}  // namespace
}  // namespace hb
