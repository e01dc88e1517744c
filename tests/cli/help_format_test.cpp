// --help that fits a screen (cli/help_format.h, issue 49): options in their groups with short
// placeholders, the everyday ones in --help, every one in --help-all. First on a small CLI11 app,
// then `run --help` and `run --help-all` of the built binary.
#include "cli/help_format.h"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli/numeric_options.h"
#include "core/error.h"
#include "tests/cli_fixture.h"

namespace hb::cli {
namespace {

bool has(const std::string& text, const std::string& piece) {
  return text.find(piece) != std::string::npos;
}

size_t lines(const std::string& text) {
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

// A `run` with a percent, an integer and a text option, as the real one declares them.
struct SmallApp {
  CLI::App app{"t", "hybridbench"};
  CLI::App* run = nullptr;
  double noise = 0.05;
  int steps = 24;
  std::string out;
  SmallApp() {
    app.set_help_all_flag("--help-all", "everything");
    use_clean_help(app);
    run = app.add_subcommand("run", "Sweep");
    add_percent_option(*run, "--max-noise", noise, "Noise target in percent, long text",
                       parse::RealRange{0, 100, true, false});
    add_integer_option(*run, "--decode-steps", steps, "Most decode steps", 1, 100000)
        ->capture_default_str();
    run->add_option("--out", out, "Report path");
  }
};

TEST(HelpFormat, PlaceholdersWithoutTypeNoise) {
  SmallApp s;
  EXPECT_EQ(option_placeholder(*s.run->get_option("--max-noise")), "PCT");
  EXPECT_EQ(option_placeholder(*s.run->get_option("--decode-steps")), "N");
  EXPECT_EQ(option_placeholder(*s.run->get_option("--out")), "TEXT");
  EXPECT_EQ(option_placeholder(*s.run->get_option("--help")), "");  // a flag
  const std::string help = s.run->help();
  EXPECT_FALSE(has(help, "FLOAT")) << help;
  EXPECT_FALSE(has(help, "PERCENT")) << help;
  EXPECT_FALSE(has(help, "INT:")) << help;
  EXPECT_TRUE(has(help, "--max-noise PCT")) << help;
  EXPECT_TRUE(has(help, "(default 5)")) << help;
  EXPECT_TRUE(has(help, "--decode-steps N")) << help;
}

TEST(HelpFormat, GroupsShowTheBriefsAndHelpAllEverything) {
  SmallApp s;
  use_help_groups(
      *s.run,
      {{"Measurement", {{"--decode-steps", "Most decode steps per point"}, {"--max-noise", ""}}},
       {"Output",
        {{"--out", "Report path"}, {"--help", "This help"}, {"--help-all", "Everything"}}}});
  const std::string brief = s.run->help();
  EXPECT_TRUE(has(brief, "\nMeasurement:\n  --decode-steps N")) << brief;
  EXPECT_TRUE(has(brief, "\nOutput:\n")) << brief;
  EXPECT_FALSE(has(brief, "--max-noise")) << brief;
  EXPECT_TRUE(has(brief, "1 more options, with full descriptions: hybridbench run --help-all"))
      << brief;
  const std::string all = s.run->help("", CLI::AppFormatMode::All);
  EXPECT_TRUE(has(all, "--max-noise PCT")) << all;
  EXPECT_TRUE(has(all, "Noise target in percent, long text")) << all;
  EXPECT_LT(all.find("Measurement:"), all.find("Output:")) << all;
}

TEST(HelpFormat, EveryOptionMustBeInAGroupAndEveryNameMustExist) {
  SmallApp s;
  EXPECT_THROW(use_help_groups(*s.run, {{"Output", {{"--out", "Report path"}}}}), Error);
  SmallApp t;
  EXPECT_THROW(use_help_groups(*t.run, {{"Output", {{"--no-such", "x"}}}}), Error);
}

}  // namespace
}  // namespace hb::cli

namespace hb::cli_test {
namespace {

class RunHelp : public CliTest {};

// Issue 49: `run --help` was 133 ungrouped lines with "FLOAT:PERCENT 0 < x <= 100=5".
TEST_F(RunHelp, FitsAScreenInGroupsAndHelpAllHasEveryOption) {
  ASSERT_EQ(run("run --help"), 0) << out_;
  const std::string brief = stdout_;
  EXPECT_LE(std::count(brief.begin(), brief.end(), '\n'), 60) << brief;
  for (const char* g : {"\nSweep:\n", "\nMeasurement:\n", "\nModel mode:\n", "\nOutput:\n"})
    EXPECT_NE(brief.find(g), std::string::npos) << g << "\n" << brief;
  for (const char* noise : {"FLOAT", "PERCENT", "INT:", "TEXT:", "=5"})
    EXPECT_EQ(brief.find(noise), std::string::npos) << noise << "\n" << brief;
  EXPECT_NE(brief.find("run --help-all"), std::string::npos) << brief;

  ASSERT_EQ(run("run --help-all"), 0) << out_;
  const std::string all = stdout_;
  for (const char* o : {"--model", "--seq-len", "--max-noise PCT", "--tie-margin", "--kv-pages",
                        "--gather-timeout", "--gpus-per-node", "--resume", "--help-all"})
    EXPECT_NE(all.find(o), std::string::npos) << o << "\n" << all;
  EXPECT_EQ(all.find("FLOAT"), std::string::npos) << all;
  EXPECT_NE(all.find("--workload "), std::string::npos);  // the knobs' footer
}

// Every subcommand's --help is free of CLI11's type and validator text too.
TEST_F(RunHelp, OtherSubcommandsHaveNoTypeNoise) {
  for (const char* sub : {"topo", "probe", "compare", "report", "validate-model"}) {
    ASSERT_EQ(run(std::string(sub) + " --help"), 0) << sub << "\n" << out_;
    for (const char* noise : {"FLOAT", "PERCENT ", "INT:", "TEXT:"})
      EXPECT_EQ(stdout_.find(noise), std::string::npos) << sub << ": " << noise << "\n" << stdout_;
  }
}

}  // namespace
}  // namespace hb::cli_test
