// The compare and report subcommands end to end through the binary: exit codes and files.
// Skipped when the binary has not been built (test_reports does not depend on it).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "fixtures.h"
#include "reports/json_io.h"

namespace hb::reports {
namespace {

namespace fs = std::filesystem;

class ReportCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(HB_BINARY)) GTEST_SKIP() << "hybridbench not built: " << HB_BINARY;
    std::string t = (fs::temp_directory_path() / "hb-cli-XXXXXX").string();
    dir_ = ::mkdtemp(t.data());
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  std::string file(const std::string& name) const { return (fs::path(dir_) / name).string(); }
  // Runs hybridbench with `args`; returns the exit status, output in out_.
  int run(const std::string& args) {
    const std::string cmd = std::string(HB_BINARY) + " " + args + " > " + file("out.txt") + " 2>&1";
    const int st = std::system(cmd.c_str());
    std::ifstream in(file("out.txt"));
    std::stringstream ss;
    ss << in.rdbuf();
    out_ = ss.str();
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }
  std::string dir_, out_;
};

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
  EXPECT_EQ(run("compare " + file("old.json") + " " + file("slow.json") + " --bmf " + file("bmf.json") +
                " --github-benchmark " + file("gh.json") + " --json " + file("v.json")),
            3)
      << out_;
  EXPECT_NE(out_.find("SLOWER !"), std::string::npos) << out_;
  EXPECT_TRUE(fs::exists(file("bmf.json")) && fs::exists(file("gh.json")) && fs::exists(file("v.json")));
  // A 20% slowdown passes when the threshold allows it.
  EXPECT_EQ(run("compare " + file("old.json") + " " + file("slow.json") + " --threshold 0.25"), 0) << out_;
}

TEST_F(ReportCli, CompareWithNothingInCommonExitsTwo) {
  Report base = testing::make_report(), other = testing::make_report(), empty = testing::make_report();
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
  EXPECT_EQ(run("report " + file("r.json") + " --format csv --out " + file("r.csv") + " --html " + file("r.html")), 0)
      << out_;
  std::ifstream html(file("r.html"));
  std::stringstream ss;
  ss << html.rdbuf();
  EXPECT_NE(ss.str().find("<svg"), std::string::npos);
  EXPECT_TRUE(fs::exists(file("r.csv")));
}

}  // namespace
}  // namespace hb::reports
