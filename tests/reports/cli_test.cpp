// The compare and report subcommands end to end through the binary: exit codes and files.
// Skipped when the binary has not been built (test_reports does not depend on it).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fixtures.h"
#include "tests/cli_fixture.h"
#include "reports/json_io.h"

namespace hb::reports {
namespace {

namespace fs = std::filesystem;

class ReportCli : public hb::cli_test::CliTest {};

Report slowed(Report r, size_t index, double factor) {
  std::vector<double> v = r.points[index].step.samples_ns;
  for (auto& x : v) x *= factor;
  static_cast<Timing&>(r.points[index].step) = Timing::from_samples(v);
  r.speedups = compute_speedups(r.points);
  return r;
}

TEST_F(ReportCli, CompareExitCodes) {
  const Report base = testing::make_report();
  write_report(file("old.json"), base);
  write_report(file("same.json"), base);
  write_report(file("slow.json"), slowed(base, 2, 1.2));
  EXPECT_EQ(run("compare " + file("old.json") + " " + file("same.json")), 0) << out_;
  EXPECT_NE(out_.find("OK: no regression"), std::string::npos) << out_;
  EXPECT_EQ(
      run("compare " + file("old.json") + " " + file("slow.json") + " --bmf " + file("bmf.json") +
          " --github-benchmark " + file("gh.json") + " --json " + file("v.json")),
      3)
      << out_;
  EXPECT_NE(out_.find("SLOWER !"), std::string::npos) << out_;
  EXPECT_TRUE(fs::exists(file("bmf.json")) && fs::exists(file("gh.json")) &&
              fs::exists(file("v.json")));
  // A 20% slowdown passes when the threshold allows it.
  EXPECT_EQ(run("compare " + file("old.json") + " " + file("slow.json") + " --threshold 0.25"), 0)
      << out_;
}

TEST_F(ReportCli, CompareWithNothingInCommonExitsTwo) {
  Report base = testing::make_report(), other = testing::make_report(),
         empty = testing::make_report();
  for (auto& p : other.points) p.axes.model = "qwen2.5-7b";
  empty.points.clear();
  empty.speedups.clear();
  write_report(file("old.json"), base);
  write_report(file("other.json"), other);
  write_report(file("empty.json"), empty);
  EXPECT_EQ(run("compare " + file("old.json") + " " + file("other.json")), 2) << out_;
  EXPECT_NE(out_.find("nothing to compare"), std::string::npos) << out_;
  EXPECT_EQ(out_.find("OK: no regression"), std::string::npos) << out_;
  EXPECT_EQ(run("compare " + file("empty.json") + " " + file("old.json")), 2) << out_;
  EXPECT_NE(out_.find("the OLD report has no points"), std::string::npos) << out_;
}

TEST_F(ReportCli, BrokenInputExitsTwoWithTheFileNamed) {
  const std::string text = to_json_text(testing::make_report());
  std::ofstream(file("cut.json")) << text.substr(0, text.size() / 3);
  write_report(file("ok.json"), testing::make_report());
  EXPECT_EQ(run("compare " + file("ok.json") + " " + file("cut.json")), 2);
  EXPECT_NE(out_.find(file("cut.json")), std::string::npos) << out_;
  EXPECT_NE(out_.find("truncated"), std::string::npos) << out_;
  EXPECT_EQ(run("report " + file("cut.json")), 2);
  // Command-line mistakes are usage errors too, with CLI11's message.
  EXPECT_EQ(run("report"), 2) << out_;
  EXPECT_EQ(run("compare --no-such-flag " + file("ok.json") + " " + file("ok.json")), 2) << out_;
  EXPECT_EQ(run("--help"), 0) << out_;
}

TEST_F(ReportCli, ReportWritesTablesAndHtml) {
  write_report(file("r.json"), testing::make_report());
  EXPECT_EQ(run("report " + file("r.json")), 0) << out_;
  EXPECT_NE(out_.find("| strategy |"), std::string::npos) << out_;
  EXPECT_EQ(run("report " + file("r.json") + " --format csv --out " + file("r.csv") + " --html " +
                file("r.html")),
            0)
      << out_;
  std::ifstream html(file("r.html"));
  std::stringstream ss;
  ss << html.rdbuf();
  EXPECT_NE(ss.str().find("<svg"), std::string::npos);
  EXPECT_TRUE(fs::exists(file("r.csv")));
}

// Outputs (reports/output_file.h) through each command: checked before any work, never an input,
// "-" is standard output with the human text moved to stderr, devices are written in place.

// A sweep of one point that takes a second or two on the CPU accelerator.
const std::string kTinyRun =
    " --model qwen2.5-0.5b --seq-len 256 --decode-steps 4 --warmup 1 --min-samples 2 "
    "--accuracy-steps 1 --accelerator cpu --accelerator-threads 1 --host-threads 1 "
    "--strategy cpu-only";

TEST_F(ReportCli, OutputThatIsAnInputIsRefusedAndTheInputUntouched) {
  write_report(file("r.json"), testing::make_report());
  write_report(file("new.json"), testing::make_report());
  fs::create_symlink(file("r.json"), file("alias.json"));
  const std::string before = slurp(file("r.json"));
  EXPECT_EQ(run("report " + file("r.json") + " --out " + file("r.json")), 2) << out_;
  EXPECT_NE(out_.find("--out " + file("r.json") + ": is the input"), std::string::npos) << out_;
  EXPECT_EQ(
      run("report " + file("r.json") + " --out " + file("t.md") + " --html " + file("alias.json")),
      2)
      << out_;
  EXPECT_FALSE(fs::exists(file("t.md")));  // refused before any work
  EXPECT_EQ(
      run("compare " + file("r.json") + " " + file("new.json") + " --json " + file("alias.json")),
      2)
      << out_;
  EXPECT_EQ(run("compare " + file("r.json") + " " + file("new.json") + " --bmf " + file("r.json")),
            2)
      << out_;
  EXPECT_EQ(slurp(file("r.json")), before);
  EXPECT_TRUE(fs::is_symlink(file("alias.json")));
}

TEST_F(ReportCli, OutputCheckedBeforeReadingAndTwoOutputsMayNotShareAFile) {
  write_report(file("r.json"), testing::make_report());
  EXPECT_EQ(run("report " + file("r.json") + " --out /nonexistent-hb/d/t.md"), 2) << out_;
  EXPECT_NE(out_.find("--out /nonexistent-hb/d/t.md: the folder /nonexistent-hb/d does not exist"),
            std::string::npos)
      << out_;
  EXPECT_EQ(run("compare " + file("r.json") + " " + file("r.json") + " --json " + file("v.json") +
                " --bmf " + file("v.json")),
            2)
      << out_;
  EXPECT_EQ(run("report " + file("r.json") + " --html -"), 2)
      << out_;  // the table is on stdout already
}

TEST_F(ReportCli, DashIsStandardOutputWithTheTableOnStderr) {
  write_report(file("r.json"), testing::make_report());
  ASSERT_EQ(run("compare " + file("r.json") + " " + file("r.json") + " --json -"), 0) << out_;
  const auto verdicts = nlohmann::json::parse(stdout_, nullptr, false);
  ASSERT_FALSE(verdicts.is_discarded()) << stdout_;
  EXPECT_EQ(verdicts.value("schema", ""), "hybridbench.compare/1");
  EXPECT_NE(out_.find("OK: no regression"), std::string::npos) << out_;  // on stderr
  EXPECT_FALSE(fs::exists("-"));
  if (!testing::make_char_device(file("null"), 1, 3))
    GTEST_SKIP() << "cannot make device nodes here (needs root)";
  ASSERT_EQ(run("report " + file("r.json") + " --out " + file("null") + " --html -"), 0) << out_;
  EXPECT_EQ(stdout_.rfind("<!DOCTYPE html>", 0), 0u) << stdout_.substr(0, 200);
}

// Private copies of /dev/full and /dev/null: a regressed writer must not replace the machine's.
TEST_F(ReportCli, DevFullFailsNonZeroAndStaysADevice) {
  if (!testing::make_char_device(file("full"), 1, 7) ||
      !testing::make_char_device(file("null"), 1, 3))
    GTEST_SKIP() << "cannot make device nodes here (needs root)";
  write_report(file("r.json"), testing::make_report());
  EXPECT_EQ(run("report " + file("r.json") + " --out " + file("full")), 1) << out_;
  EXPECT_NE(out_.find("cannot write " + file("full") + ": No space left on device"),
            std::string::npos)
      << out_;
  EXPECT_TRUE(fs::is_character_file(file("full")));
  EXPECT_EQ(run("report " + file("r.json") + " --out " + file("null")), 0) << out_;
  EXPECT_TRUE(fs::is_character_file(file("null")));
}

TEST_F(ReportCli, RunChecksOutBeforeTheSweep) {
  // Before: the sweep ran, then the write failed with exit 1 and the points were lost.
  EXPECT_EQ(run("run" + kTinyRun + " --out /nonexistent-hb/d/r.json"), 2) << out_;
  EXPECT_NE(
      out_.find("--out /nonexistent-hb/d/r.json: the folder /nonexistent-hb/d does not exist"),
      std::string::npos)
      << out_;
  EXPECT_EQ(out_.find("cpu-only"), std::string::npos) << out_;  // no summary: nothing ran
  EXPECT_EQ(run("run" + kTinyRun + " --out " + dir_), 2) << out_;
  EXPECT_NE(out_.find("is a folder"), std::string::npos) << out_;
  // The config file is an input: --out may not overwrite it.
  std::ofstream(file("c.json")) << "{\"decode-steps\": 4}\n";
  const std::string config = slurp(file("c.json"));
  EXPECT_EQ(run("run" + kTinyRun + " --config " + file("c.json") + " --out " + file("c.json")), 2)
      << out_;
  EXPECT_NE(out_.find("is the input"), std::string::npos) << out_;
  EXPECT_EQ(slurp(file("c.json")), config);
}

TEST_F(ReportCli, RunOutDashPutsTheReportOnStdoutAndTheSummaryOnStderr) {
  ASSERT_EQ(run("run" + kTinyRun + " --out -"), 0) << out_;
  const Report r = from_json_text(stdout_, "stdout");
  ASSERT_EQ(r.points.size(), 1u);
  EXPECT_EQ(r.points[0].axes.strategy, "cpu-only");
  EXPECT_NE(out_.find("wrote the report to standard output"), std::string::npos) << out_;
  EXPECT_NE(out_.substr(stdout_.size()).find("cpu-only"), std::string::npos)
      << out_;  // the summary, on stderr
  EXPECT_FALSE(fs::exists("-"));
}

TEST_F(ReportCli, ValidateModelChecksItsOutputsFirst) {
  // Before: the probe, calibration and sweep ran, then the ofstream failed (exit 1).
  EXPECT_EQ(run("validate-model" + kTinyRun + " --no-live --out /nonexistent-hb/d/v.json"), 2)
      << out_;
  EXPECT_NE(out_.find("--out /nonexistent-hb/d/v.json: the folder"), std::string::npos) << out_;
  EXPECT_EQ(out_.find("probing"), std::string::npos) << out_;
  // The profile read is an input of --out and --report (--write-model may extend it in place).
  std::ofstream(file("me.json")) << "{}\n";
  EXPECT_EQ(run("validate-model" + kTinyRun + " --platform " + file("me.json") + " --report " +
                file("me.json")),
            2)
      << out_;
  EXPECT_NE(out_.find("--report " + file("me.json") + ": is the input"), std::string::npos) << out_;
  EXPECT_EQ(slurp(file("me.json")), "{}\n");
}

}  // namespace
}  // namespace hb::reports
