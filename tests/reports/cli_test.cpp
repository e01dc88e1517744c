// The compare and report subcommands end to end through the binary: exit codes and files.
// Skipped when the binary has not been built (test_reports does not depend on it).
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
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
  const Report base = testing::with_passes(testing::make_report());  // run --repetitions 5
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

// Single-pass reports (a plain `run`): drift between runs is unmeasured, so the same 20% is
// INCONCLUSIVE, exit 0, and the output names the command that would decide it.
TEST_F(ReportCli, CompareOfSinglePassesIsInconclusiveNotARegression) {
  const Report base = testing::make_report();
  write_report(file("old.json"), base);
  write_report(file("slow.json"), slowed(base, 2, 1.2));
  EXPECT_EQ(run("compare " + file("old.json") + " " + file("slow.json")), 0) << out_;
  EXPECT_NE(out_.find("INCONCLUSIVE"), std::string::npos) << out_;
  EXPECT_NE(out_.find("`hybridbench run --seq-len 4k:16k:x2 --repetitions 5`"), std::string::npos)
      << out_;
  EXPECT_EQ(run("compare " + file("old.json") + " " + file("slow.json") + " --drift-allowance 0"),
            3)
      << out_;
  EXPECT_EQ(run("compare " + file("old.json") + " " + file("slow.json") + " --drift-allowance -1"),
            2)
      << out_;
}

// The verdict line counts what could not be judged; --fail-unjudged makes that exit 4, below a
// regression's 3. With --out taking the table the line still reaches the log.
TEST_F(ReportCli, CompareCountsUnjudgedPointsAndFailsThemWhenAsked) {
  const Report base = testing::make_report();  // one round a point
  write_report(file("old.json"), base);
  write_report(file("slow.json"), slowed(base, 2, 1.2));  // within the drift allowance
  const std::string pair = " " + file("old.json") + " " + file("slow.json");
  const std::string line = "OK: no regression (1 of 5 timed points not judged: 1 INCONCLUSIVE)\n";
  EXPECT_EQ(run("compare" + pair), 0) << out_;
  EXPECT_NE(out_.find(line), std::string::npos) << out_;
  EXPECT_EQ(run("compare" + pair + " --fail-unjudged"), 4) << out_;
  EXPECT_NE(out_.find("UNJUDGED: 1 of 5 timed points not judged"), std::string::npos) << out_;
  EXPECT_EQ(run("compare " + file("old.json") + " " + file("old.json") + " --fail-unjudged"), 0)
      << out_;
  EXPECT_EQ(run("compare" + pair + " --out " + file("t.txt")), 0) << out_;
  EXPECT_EQ(stdout_, line);
  EXPECT_EQ(run("compare" + pair + " --out " + file("t.md") + " --format md --json -"), 0) << out_;
  EXPECT_FALSE(nlohmann::json::parse(stdout_, nullptr, false).is_discarded()) << stdout_;
  EXPECT_EQ(out_.substr(stdout_.size()), line);  // stderr: stdout holds the verdicts
  EXPECT_EQ(run("compare" + pair + " --out " + file("t.txt") + " -q"), 0) << out_;
  EXPECT_EQ(out_, "");
  // Every sample 1.3x slower in runs of 6 rounds: a regression, whatever --fail-unjudged says.
  const Report rounds = testing::with_passes(base, 6);
  write_report(file("r.json"), rounds);
  write_report(file("r-slow.json"), testing::scaled(rounds, 1.3));
  EXPECT_EQ(run("compare " + file("r.json") + " " + file("r-slow.json") + " --fail-unjudged"), 3)
      << out_;
  EXPECT_NE(out_.find("REGRESSION: 5 point(s)"), std::string::npos) << out_;
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

// --published projects the shipped rows, each with its own platform, model and lengths: an
// axis or profile option given with it would be ignored, so it is refused before anything runs.
TEST_F(ReportCli, ValidateModelPublishedRefusesOptionsItWouldIgnore) {
  for (const std::string extra : {" --seq-len 8k", " --platform x.json", " --model llama-2-7b"}) {
    EXPECT_EQ(run("validate-model --published" + extra), 2) << out_;
    EXPECT_NE(out_.find("does not apply"), std::string::npos) << out_;
    EXPECT_EQ(out_.find("projecting"), std::string::npos) << out_;
  }
  EXPECT_EQ(run("validate-model --published --out /nonexistent-hb/d/v.json"), 2) << out_;
  EXPECT_EQ(out_.find("projecting"), std::string::npos) << out_;
}

// compare --format md: the PR table, to a file with --out or on stdout; with --json - the
// verdicts take stdout and the table moves to stderr, as the text table does.
TEST_F(ReportCli, CompareMarkdownForPullRequests) {
  const Report base = testing::with_passes(testing::make_report());
  write_report(file("old.json"), base);
  write_report(file("slow.json"), slowed(base, 2, 1.5));
  EXPECT_EQ(run("compare " + file("old.json") + " " + file("slow.json") + " --format md --out " +
                file("pr.md")),
            3)
      << out_;
  // The table went to the file; the verdict line still reaches the CI log.
  EXPECT_EQ(stdout_, "REGRESSION: 1 point(s) marked '!'\n");
  const std::string md = slurp(file("pr.md"));
  EXPECT_EQ(md.rfind("### hybridbench compare: REGRESSION in 1 point(s)", 0), 0u) << md;
  EXPECT_NE(md.find("| strategy "), std::string::npos) << md;
  EXPECT_NE(md.find("| **geomean**"), std::string::npos) << md;
  ASSERT_EQ(run("compare " + file("old.json") + " " + file("old.json") + " --format md --json -"),
            0)
      << out_;
  EXPECT_FALSE(nlohmann::json::parse(stdout_, nullptr, false).is_discarded()) << stdout_;
  EXPECT_NE(out_.substr(stdout_.size()).find("| **geomean**"), std::string::npos) << out_;
  EXPECT_EQ(run("compare " + file("old.json") + " " + file("old.json") + " --format html"), 2)
      << out_;
}

// The run's --accuracy-target (the report's sweep echo) is judged: a point that met it in OLD
// and misses it in NEW fails the check, exit 3, even within --recall-tolerance.
TEST_F(ReportCli, CompareFailsAPointThatFellBelowTheAccuracyTarget) {
  Report base = testing::make_report(), pr = testing::make_report();
  base.context.sweep["accuracy_target"] = pr.context.sweep["accuracy_target"] = "recall:0.9";
  base.points[0].accuracy.mass_recall = 0.905;
  pr.points[0].accuracy.mass_recall = 0.899;
  write_report(file("old.json"), base);
  write_report(file("new.json"), pr);
  EXPECT_EQ(run("compare " + file("old.json") + " " + file("new.json")), 3) << out_;
  EXPECT_NE(out_.find("below --accuracy-target recall >= 0.9: 0.9050 -> 0.8990"), std::string::npos)
      << out_;
  EXPECT_EQ(
      run("compare " + file("old.json") + " " + file("new.json") + " --accuracy-target recall:0.8"),
      0)
      << out_;
  EXPECT_EQ(
      run("compare " + file("old.json") + " " + file("new.json") + " --accuracy-target speed:2"), 2)
      << out_;
}

// report --format bmf|github-benchmark is the exporter compare --bmf / --github-benchmark runs
// on NEW: the same bytes.
TEST_F(ReportCli, ReportExportsWhatCompareExports) {
  write_report(file("r.json"), testing::make_report());
  ASSERT_EQ(run("compare " + file("r.json") + " " + file("r.json") + " --bmf " + file("c.bmf") +
                " --github-benchmark " + file("c.gh")),
            0)
      << out_;
  ASSERT_EQ(run("report " + file("r.json") + " --format bmf --out -"), 0) << out_;
  EXPECT_EQ(stdout_, slurp(file("c.bmf")));
  const auto bmf = nlohmann::json::parse(stdout_, nullptr, false);
  ASSERT_TRUE(bmf.is_object()) << stdout_;
  EXPECT_EQ(bmf.size(), 5u);  // the timed points
  ASSERT_EQ(run("report " + file("r.json") + " --format github-benchmark"), 0) << out_;
  EXPECT_EQ(stdout_, slurp(file("c.gh")));
  ASSERT_EQ(run("report " + file("r.json") + " --format html --out -"), 0) << out_;
  EXPECT_EQ(stdout_.rfind("<!DOCTYPE html>", 0), 0u) << stdout_.substr(0, 200);
  EXPECT_EQ(run("report " + file("r.json") + " --format xml"), 2) << out_;
  // --json means "write the machine-readable result" elsewhere; report says what to use.
  EXPECT_EQ(run("report " + file("r.json") + " --json -"), 2) << out_;
  EXPECT_NE(out_.find("report has no --json"), std::string::npos) << out_;
  EXPECT_NE(out_.find("--format csv, bmf or github-benchmark"), std::string::npos) << out_;
}

// The CSV carries the accuracy-target verdict and the Pareto front the markdown marks.
TEST_F(ReportCli, CsvHasTheTargetVerdictAndTheParetoFront) {
  Report r = testing::make_report();
  r.context.sweep["accuracy_target"] = "recall:0.95";
  r.points[0].accuracy.mass_recall = 0.5;  // cpu-only 4k: slower and less accurate than full-gpu
  write_report(file("r.json"), r);
  ASSERT_EQ(run("report " + file("r.json") + " --format csv"), 0) << out_;
  std::istringstream in(stdout_);
  std::string header;
  std::getline(in, header);
  std::vector<std::string> names;
  for (size_t a = 0, b; a <= header.size(); a = b + 1) {
    b = header.find(',', a);
    if (b == std::string::npos) b = header.size();
    names.push_back(header.substr(a, b - a));
  }
  const auto col = [&](const std::string& n) {
    return static_cast<size_t>(std::find(names.begin(), names.end(), n) - names.begin());
  };
  ASSERT_LT(col("pareto_front"), names.size()) << header;
  ASSERT_LT(col("within_accuracy_target"), names.size()) << header;
  int rows = 0;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> f;
    for (size_t a = 0, b; a <= line.size(); a = b + 1) {
      b = line.find(',', a);
      if (b == std::string::npos) b = line.size();
      f.push_back(line.substr(a, b - a));
    }
    if (f.size() != names.size()) continue;  // a quoted reason with a comma: not these rows
    ++rows;
    const std::string strategy = f[col("strategy")], len = f[col("seq_len")];
    EXPECT_EQ(f[col("accuracy_target")], "recall:0.95");
    if (strategy == "cpu-only" && len == "4096") {
      EXPECT_EQ(f[col("within_accuracy_target")], "false") << line;
      EXPECT_EQ(f[col("pareto_front")], "false") << line;
    } else if (strategy == "full-gpu" && len == "4096") {
      EXPECT_EQ(f[col("within_accuracy_target")], "true") << line;
      EXPECT_EQ(f[col("pareto_front")], "true") << line;
    } else if (strategy == "full-gpu" && len == "16384") {  // oom: not scored, not on the front
      EXPECT_EQ(f[col("within_accuracy_target")], "") << line;
      EXPECT_EQ(f[col("pareto_front")], "false") << line;
    }
  }
  EXPECT_GE(rows, 5);
}

}  // namespace
}  // namespace hb::reports
