// `compare --ab OLD_BIN NEW_BIN -- run ARGS...` (cli/ab_run.*): two tiny sweeps through the real
// binary. There is no test hook that slows a strategy, so the regression case runs NEW as a
// wrapper script that gives the same binary a smaller Quest budget: the attended tokens, a
// figure compare holds exact, change, and compare's verdict (exit 3) must come through the A/B.
#include <sys/stat.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/cli_fixture.h"

namespace hb {
namespace {

namespace fs = std::filesystem;

// One unit of two strategies at 256 tokens: a second or two a pass on the CPU accelerator.
const std::string kTinyRun =
    " -- run --model qwen2.5-0.5b --seq-len 256 --decode-steps 4 --warmup 1 --min-samples 2 "
    "--accuracy-steps 2 --accelerator cpu --accelerator-threads 1 --host-threads 1 "
    "--strategy cpu-only,quest --timeout 0.3";
// The timing verdict is not what these tests are about (a 2-core machine shared with builds
// moves a tiny sweep's times by tens of percent): only a change beyond 10x fails on time.
const std::string kLenient = " --threshold 9 --min-effect 9";

class AbCompare : public cli_test::CliTest {
 protected:
  std::string ab(const std::string& old_bin, const std::string& new_bin, const std::string& opts) {
    return "compare --ab " + old_bin + " " + new_bin + " --ab-dir " + file("ab") + opts;
  }
  // An executable script that runs this build with `extra` after its arguments.
  std::string wrapper(const std::string& name, const std::string& extra) {
    const std::string path = file(name);
    std::ofstream(path) << "#!/bin/sh\nexec " << HB_BINARY << " \"$@\" " << extra << "\n";
    ::chmod(path.c_str(), 0755);
    return path;
  }
  nlohmann::json read_json(const std::string& path) {
    return nlohmann::json::parse(slurp(path), nullptr, false);
  }
};

// A/A: the same binary twice is the same, exit 0; each pass's report and log stay in the folder,
// and each side's pooled report holds both of its passes (one entry per pass process).
TEST_F(AbCompare, SameBinaryTwiceIsSame) {
  ASSERT_EQ(run(ab(HB_BINARY, HB_BINARY, " --ab-passes 2" + kLenient) + kTinyRun), 0) << out_;
  for (const char* f : {"old-1.json", "old-2.json", "new-1.json", "new-2.json", "old-1.log",
                        "new-2.log", "old.json", "new.json"})
    EXPECT_TRUE(fs::exists(file("ab/") + f)) << f;
  // Interleaved, counterbalanced: old new, then new old.
  const size_t o1 = out_.find("1/4: old pass 1/2"), n1 = out_.find("2/4: new pass 1/2"),
               n2 = out_.find("3/4: new pass 2/2"), o2 = out_.find("4/4: old pass 2/2");
  ASSERT_NE(o2, std::string::npos) << out_;
  EXPECT_TRUE(o1 < n1 && n1 < n2 && n2 < o2) << out_;
  EXPECT_NE(out_.find("SAME"), std::string::npos) << out_;
  // Judged by its pass pairs (reports/compare_pairs.h), which the table says.
  EXPECT_NE(out_.find("timing verdicts are by pass pairs"), std::string::npos) << out_;
  const auto pooled = read_json(file("ab/new.json"));
  ASSERT_TRUE(pooled.is_object());
  ASSERT_EQ(pooled["points"].size(), 2u) << pooled.dump(1).substr(0, 2000);
  for (const auto& p : pooled["points"])
    EXPECT_EQ(p["step"]["repetition_rounds"].size(), 2u) << p.dump(1).substr(0, 2000);
  const auto one = read_json(file("ab/new-1.json"));
  EXPECT_FALSE(one["points"][0]["step"].contains("repetition_rounds"));  // --repetitions 1
}

// A pass that fails stops the A/B with its exit status and the end of its log.
TEST_F(AbCompare, FailingPassStopsTheAb) {
  ASSERT_EQ(run(ab(HB_BINARY, HB_BINARY, " --ab-passes 2 --threshold 9 --min-effect 9") + kTinyRun +
                " --strategy-only-check-skip"),
            2)
      << out_;  // an unknown run option: the first pass fails, exit 2 with its log's end
  EXPECT_NE(out_.find("1/4: old pass 1/2"), std::string::npos) << out_;
  EXPECT_NE(out_.find("exited 2"), std::string::npos) << out_;
  EXPECT_NE(out_.find("--strategy-only-check-skip"), std::string::npos) << out_;  // the log's end
  EXPECT_EQ(out_.find("new pass"), std::string::npos) << out_;  // nothing after a failure
}

// A behaviour change in NEW (it attends fewer tokens) is compare's regression: exit 3.
TEST_F(AbCompare, BehaviourChangeInNewIsARegression) {
  const std::string changed = wrapper("new.sh", "--opt quest.budget=64");
  ASSERT_EQ(run(ab(HB_BINARY, changed, " --ab-passes 1 --threshold 9 --min-effect 9") + kTinyRun),
            3)
      << out_;
  EXPECT_NE(out_.find("1/2: old pass 1/1"), std::string::npos) << out_;
  EXPECT_NE(out_.find("2/2: new pass 1/1"), std::string::npos) << out_;
  EXPECT_NE(out_.find("regression"), std::string::npos) << out_;
  EXPECT_NE(out_.find("quest"), std::string::npos) << out_;
}

// Refused before any pass runs (exit 2, no folder made).
TEST_F(AbCompare, RefusesBadInputBeforeRunning) {
  const std::string not_exec = file("plain");
  std::ofstream(not_exec) << "not a program\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {ab(file("missing"), HB_BINARY, "") + kTinyRun, "does not exist"},
      {ab(HB_BINARY, not_exec, "") + kTinyRun, "not an executable"},
      {ab(HB_BINARY, HB_BINARY, "") + " -- --seq-len 256", "-- run ARGS"},
      {ab(HB_BINARY, HB_BINARY, "") + kTinyRun + " --out x.json", "may not give --out"},
      {ab(HB_BINARY, HB_BINARY, "") + kTinyRun + " --resume=x.json", "may not give --resume"},
      {"compare a.json b.json c.json", "two reports"},
      {"compare a.json", "two reports"},
      {"compare a.json b.json --ab-passes 2", "--ab"},
  };
  for (const auto& [args, says] : cases) {
    EXPECT_EQ(run(args), 2) << args << "\n" << out_;
    EXPECT_NE(out_.find(says), std::string::npos) << args << "\n" << out_;
    EXPECT_FALSE(fs::exists(file("ab"))) << args;
  }
  fs::create_directories(file("ab"));
  std::ofstream(file("ab/old-1.json")) << "{}";
  EXPECT_EQ(run(ab(HB_BINARY, HB_BINARY, "") + kTinyRun), 2) << out_;
  EXPECT_NE(out_.find("already holds files"), std::string::npos) << out_;
}

// Ctrl-C (SIGINT to the job's process group) stops the A/B: the running pass writes its
// interrupted report, the finished passes stay, and the exit status is 130.
TEST_F(AbCompare, InterruptKeepsFinishedPasses) {
  const pid_t pid = start(ab(HB_BINARY, HB_BINARY, " --ab-passes 3") + kTinyRun, {"", -1, true});
  for (int i = 0; i < 600 && !fs::exists(file("ab/old-1.json")); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_TRUE(fs::exists(file("ab/old-1.json"))) << slurp(file("log.txt"));
  ::kill(-pid, SIGINT);
  EXPECT_EQ(wait(pid), 130) << out_;
  EXPECT_NE(out_.find("stopped by SIGINT"), std::string::npos) << out_;
  EXPECT_TRUE(fs::exists(file("ab/old-1.json")));
  EXPECT_FALSE(fs::exists(file("ab/old.json")));  // nothing pooled, no verdict
}

}  // namespace
}  // namespace hb
