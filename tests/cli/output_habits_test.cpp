// The habits every subcommand shares (cli/README.md, "Output files"): `--out -` / `--json -`
// put the machine-readable result on stdout and the human text on stderr, `--json FILE` writes
// the same result as `--out FILE`, a bare `--json` (the older flag spelling) means `--json -`,
// `-q` silences progress, and --out and --json naming different files is refused up front.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/cli_fixture.h"

namespace hb::cli {
namespace {

class OutputHabits : public hb::cli_test::CliTest {
 protected:
  std::string stderr_() const { return out_.substr(stdout_.size()); }
  bool stdout_is_json() const {
    return !nlohmann::json::parse(stdout_, nullptr, false).is_discarded();
  }
};

// One point, a second or two on the CPU accelerator.
const std::string kTinyRun =
    " --model qwen2.5-0.5b --seq-len 256 --decode-steps 4 --warmup 1 --min-samples 2 "
    "--accuracy-steps 1 --accelerator cpu --accelerator-threads 1 --host-threads 1 "
    "--strategy cpu-only";
const std::string kTopology = std::string(" --topology ") + HB_TOPOLOGY_DIR + "/cxlmem+dax.v2.xml";

// Any version: the schema's number moves with reports/report.h, this test is about where it goes.
bool is_any_report(const std::string& json_text) {
  return nlohmann::json::parse(json_text).value("schema", "").rfind("hybridbench.report/", 0) == 0;
}

TEST_F(OutputHabits, RunJsonDashIsTheReportOnStdout) {
  ASSERT_EQ(run("run" + kTinyRun + " --json -"), 0) << out_;
  ASSERT_TRUE(stdout_is_json()) << stdout_;
  EXPECT_TRUE(is_any_report(stdout_)) << stdout_;
  EXPECT_NE(stderr_().find("cpu-only"), std::string::npos) << out_;  // the summary
  ASSERT_EQ(run("run" + kTinyRun + " -q --json " + file("r.json")), 0) << out_;
  EXPECT_TRUE(is_any_report(slurp(file("r.json"))));
  EXPECT_EQ(run("run" + kTinyRun + " --out " + file("a.json") + " --json " + file("b.json")), 2)
      << out_;
  EXPECT_NE(out_.find("name the same result twice"), std::string::npos) << out_;
}

TEST_F(OutputHabits, ProbeJsonAndOutDashPutTheProfileOnStdout) {
  const std::string probe = "probe --quick --duration 0.02 --mem-nodes 0 --cpu-nodes 0";
  for (const std::string spelling : {" --out -", " --json -", " --json"}) {
    ASSERT_EQ(run(probe + spelling), 0) << spelling << "\n" << out_;
    ASSERT_TRUE(stdout_is_json()) << spelling << "\n" << stdout_;
    EXPECT_NE(stderr_().find("GB/s"), std::string::npos) << spelling << "\n" << out_;  // table
    EXPECT_NE(stderr_().find("probe: "), std::string::npos) << out_;                   // progress
  }
  // -q: no progress lines, and with the profile on stdout no table either.
  ASSERT_EQ(run(probe + " -q --json -"), 0) << out_;
  EXPECT_TRUE(stdout_is_json()) << stdout_;
  EXPECT_EQ(stderr_(), "") << out_;
  ASSERT_EQ(run(probe + " -q"), 0) << out_;
  EXPECT_EQ(stderr_(), "") << out_;
  EXPECT_NE(stdout_.find("GB/s"), std::string::npos) << out_;  // the result stays
  EXPECT_EQ(run(probe + " --out " + file("a.json") + " --json " + file("b.json")), 2) << out_;
}

TEST_F(OutputHabits, TopoJsonFileOrDash) {
  ASSERT_EQ(run("topo" + kTopology + " --json -"), 0) << out_;
  ASSERT_TRUE(stdout_is_json()) << stdout_;
  EXPECT_EQ(nlohmann::json::parse(stdout_).value("schema", ""), "hybridbench.topology/1");
  EXPECT_NE(stderr_().find("Topology from"), std::string::npos) << out_;
  ASSERT_EQ(run("topo" + kTopology + " --json"), 0) << out_;  // the old flag spelling
  EXPECT_TRUE(stdout_is_json()) << stdout_;
  ASSERT_EQ(run("topo" + kTopology + " --json -q"), 0) << out_;
  EXPECT_EQ(stderr_(), "") << out_;
  ASSERT_EQ(run("topo" + kTopology + " --json " + file("t.json")), 0) << out_;
  EXPECT_NE(stdout_.find("Topology from"), std::string::npos) << out_;
  EXPECT_EQ(nlohmann::json::parse(slurp(file("t.json"))).value("schema", ""),
            "hybridbench.topology/1");
  EXPECT_EQ(run("topo" + kTopology + " --json /nonexistent-hb/d/t.json"), 2) << out_;
  EXPECT_NE(out_.find("--json /nonexistent-hb/d/t.json: the folder"), std::string::npos) << out_;
}

TEST_F(OutputHabits, ValidateModelJsonIsItsOut) {
  // Refused before any probing or calibration.
  EXPECT_EQ(
      run("validate-model" + kTinyRun + " --out " + file("a.json") + " --json " + file("b.json")),
      2)
      << out_;
  EXPECT_NE(out_.find("name the same result twice"), std::string::npos) << out_;
  EXPECT_EQ(out_.find("probing"), std::string::npos) << out_;
  EXPECT_EQ(run("validate-model" + kTinyRun + " --json /nonexistent-hb/d/v.json"), 2) << out_;
  EXPECT_NE(out_.find("--json /nonexistent-hb/d/v.json: the folder"), std::string::npos) << out_;
}

}  // namespace
}  // namespace hb::cli
