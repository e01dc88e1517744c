// CLI11's parse errors in the one error style (cli/usage_error.h): a problem and a fix, exit 2,
// the nearest option for a typo, one line for an option given twice, and no option taking "".
#include "cli/usage_error.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli/numeric_options.h"

namespace hb::cli {
namespace {

// Parses `args` against a small app with a `run` subcommand; returns the error it would print.
Error parse_error(std::vector<std::string> args) {
  CLI::App app{"t", "hybridbench"};
  app.require_subcommand(1);  // as main() has it
  app.fallthrough();
  CLI::App* run = app.add_subcommand("run");
  app.add_subcommand("report");
  int steps = 24;
  std::string seq_lens = "4k", out;
  add_integer_option(*run, "--decode-steps", steps, "steps", 1, 100000);
  run->add_option("--seq-len", seq_lens, "lengths");
  run->add_option("--out", out, "report");
  double noise = 5;
  run->add_option("--max-noise", noise, "noise");
  refuse_empty_values(app);
  std::vector<const char*> argv{"hybridbench"};
  for (const auto& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    return usage_error(e, app);
  }
  return Error("parsed", "", 0);
}

TEST(UsageError, NearestNameIsALikelyTypoOnly) {
  const std::vector<std::string> known = {"--seq-len", "--batch", "--decode-steps", "--out"};
  EXPECT_EQ(nearest_name("--sed-len", known), "--seq-len");
  EXPECT_EQ(nearest_name("--batches", known), "--batch");
  EXPECT_EQ(nearest_name("--decode-step", known), "--decode-steps");
  EXPECT_EQ(nearest_name("--frobnicate", known), "");
  EXPECT_EQ(nearest_name("--x", known), "");
}

// Issue 49: a part of a name is no typo by edit distance, but names its option all the same;
// two names holding it are no guess.
TEST(UsageError, NearestNameFindsAWholeWordPart) {
  const std::vector<std::string> known = {"--max-noise", "--accelerator-memory", "--decode-steps",
                                          "--accuracy-steps", "--seq-len"};
  EXPECT_EQ(nearest_name("--noise", known), "--max-noise");
  EXPECT_EQ(nearest_name("--memory", known), "--accelerator-memory");
  EXPECT_EQ(nearest_name("--steps", known), "");  // decode or accuracy?
  EXPECT_EQ(nearest_name("--mem", known), "");    // not a whole word
  EXPECT_EQ(nearest_name("rnu", {"run", "report", "topo"}), "run");
}

TEST(UsageError, AnUnknownSubcommandGetsTheNearest) {
  const Error e = parse_error({"rnu", "--seq-len", "1k"});
  EXPECT_NE(e.fix().find("did you mean run?"), std::string::npos) << e.fix();
  EXPECT_EQ(e.exit_code(), kExitUsage);
  const Error typo = parse_error({"run", "--noise", "5"});
  EXPECT_NE(typo.fix().find("did you mean --max-noise"), std::string::npos) << typo.fix();
}

TEST(UsageError, EveryParseErrorHasAProblemAFixAndExit2) {
  const Error typo = parse_error({"run", "--sed-len", "1k"});
  EXPECT_NE(typo.problem().find("--sed-len"), std::string::npos) << typo.problem();
  EXPECT_NE(typo.fix().find("did you mean --seq-len"), std::string::npos) << typo.fix();
  EXPECT_EQ(typo.exit_code(), kExitUsage);

  const Error range = parse_error({"run", "--decode-steps", "0"});
  EXPECT_EQ(range.problem().rfind("--decode-steps '0'", 0), 0u) << range.problem();
  EXPECT_NE(range.fix().find("from 1 to 100000"), std::string::npos) << range.fix();
  EXPECT_EQ(range.problem().find("fix:"), std::string::npos) << "the fix is its own line";

  const Error twice = parse_error({"run", "--decode-steps", "1", "--decode-steps", "2"});
  EXPECT_NE(twice.problem().find("--decode-steps is given more than once"), std::string::npos)
      << twice.problem();
  EXPECT_FALSE(twice.fix().empty());

  const Error empty = parse_error({"run", "--out", ""});
  EXPECT_NE(empty.problem().find("--out"), std::string::npos) << empty.problem();
  EXPECT_NE(empty.fix().find("give --out a value"), std::string::npos) << empty.fix();

  EXPECT_EQ(parse_error({"run", "--out", "r.json"}).exit_code(), 0);  // still parses
}

}  // namespace
}  // namespace hb::cli
