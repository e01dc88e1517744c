// `hybridbench run` end to end through the binary (HB_BINARY): Ctrl-C / SIGTERM keep the
// finished points (journal + interrupted report, exit 130 / 143), `--resume` completes the
// sweep with them unchanged, a failure mid-sweep keeps them too, and exit codes CI can trust.
// Skipped when the binary has not been built.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/cli_fixture.h"
#include "kernels/backend.h"
#include "reports/json_io.h"

namespace hb::bench {
namespace {

namespace fs = std::filesystem;

// Units of about a second each on a busy 2-core machine (the --timeout ends each point's
// sampling: a noise target no point meets, and a --min-samples the time-out waits for of only 2),
// so a signal lands between the first finished unit and the last. One pass unless
// said (kSlowPasses): a resumed point's samples are then all the first run measured.
const std::string kSlowPasses =
    "run --model qwen2.5-0.5b --seq-len 16k,20k,24k,28k,32k --strategy cpu-only,full-gpu "
    "--decode-steps 400 "
    "--warmup 1 --min-samples 2 --max-noise 0.001 --accuracy-steps 1 --timeout 0.3 "
    "--accelerator cpu "
    "--accelerator-memory 2G "  // every point fits, so every unit takes its time
    "--accelerator-threads 1 "
    "--host-threads 1 -q";
const std::string kSlowSweep = kSlowPasses + " --repetitions 1";
// Fast: three units of two points (kFastBase leaves --strategy and --accelerator to the test).
const std::string kFastBase =
    "run --model qwen2.5-0.5b --seq-len 256,512,768 --decode-steps 4 --warmup 1 --min-samples 2 "
    "--accuracy-steps 1 "
    "--accelerator-threads 1 --host-threads 1 -q --repetitions 1";
const std::string kFastSweep = kFastBase + " --strategy cpu-only,full-gpu --accelerator cpu";

// The shared CLI fixture (tests/cli_fixture.h), plus starting the binary in the background so
// a test can signal it.
class RunCli : public cli_test::CliTest {
 protected:
  // run() with one environment variable set for the child.
  int run_with(const std::string& var, const std::string& value, const std::string& args) {
    ::setenv(var.c_str(), value.c_str(), 1);
    const int rc = run(args);
    ::unsetenv(var.c_str());
    return rc;
  }

  static int lines(const std::string& path) {
    std::ifstream in(path);
    int n = 0;
    for (std::string l; std::getline(in, l);) ++n;
    return n;
  }
  // Waits until the journal holds at least one finished point (header + a point line).
  bool wait_for_a_point(const std::string& journal, pid_t pid) {
    for (int i = 0; i < 6000; ++i) {
      if (lines(journal) >= 2) return true;
      int st = 0;
      if (::waitpid(pid, &st, WNOHANG) == pid) return false;  // ended before: cannot interrupt it
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
};

std::map<std::string, const reports::Point*> by_key(const reports::Report& r) {
  std::map<std::string, const reports::Point*> m;
  for (const auto& p : r.points) m[p.axes.key()] = &p;
  return m;
}

TEST_F(RunCli, CtrlCKeepsFinishedPointsAndResumeCompletesThem) {
  const std::string out = file("r.json"), journal = out + ".partial.jsonl";
  const pid_t pid = start(kSlowSweep + " --out " + out);
  ASSERT_TRUE(wait_for_a_point(journal, pid)) << "the sweep ended before a point was journaled";
  ::kill(pid, SIGINT);
  ASSERT_EQ(wait(pid), 130) << out_;
  EXPECT_NE(out_.find("SIGINT"), std::string::npos) << out_;
  EXPECT_NE(out_.find("--resume " + out), std::string::npos) << out_;
  const reports::Report part = reports::read_report(out);
  EXPECT_TRUE(part.interruption.interrupted);
  EXPECT_NE(part.interruption.reason.find("SIGINT"), std::string::npos) << part.interruption.reason;
  ASSERT_GE(part.points.size(), 2u);
  ASSERT_LT(part.points.size(), 10u);
  for (const auto& p : part.points) EXPECT_EQ(p.status, reports::PointStatus::ok) << p.reason;
  ASSERT_TRUE(fs::exists(journal));

  // Other options: refused, naming the option; the journal is untouched.
  std::string other = kSlowSweep;
  other.replace(other.find("16k,20k,"), 8, "");
  EXPECT_EQ(run(other + " --resume " + out), 2) << out_;
  EXPECT_NE(out_.find("option --seq-len differs"), std::string::npos) << out_;
  // A new sweep onto the same file would lose the journal's points: refused too.
  EXPECT_EQ(run(kSlowSweep + " --out " + out), 2) << out_;
  EXPECT_NE(out_.find("--resume"), std::string::npos) << out_;
  ASSERT_TRUE(fs::exists(journal));

  ASSERT_EQ(run(kSlowSweep + " --resume " + out), 0) << out_;
  const reports::Report full = reports::read_report(out);
  EXPECT_FALSE(full.interruption.interrupted);
  ASSERT_EQ(full.points.size(), 10u);
  const auto now = by_key(full);
  for (const auto& p : part.points) {
    SCOPED_TRACE(p.axes.key());
    ASSERT_TRUE(now.count(p.axes.key()));
    EXPECT_EQ(now.at(p.axes.key())->step.samples_ns, p.step.samples_ns);  // the same measurement
  }
  EXPECT_FALSE(fs::exists(journal));                           // a complete report needs no journal
  EXPECT_EQ(run(kSlowSweep + " --resume " + out), 2) << out_;  // nothing left to resume
  EXPECT_NE(out_.find("no sweep journal"), std::string::npos) << out_;
}

// --repetitions in fresh processes (cli/pass_processes.h): a stop in the second pass keeps the
// first pass's points and the journal; --resume runs the rest, and each point pools both passes,
// the first pass's samples first and unchanged.
TEST_F(RunCli, PassesInFreshProcessesStopResumeAndPool) {
  const std::string args = kSlowPasses + " --repetitions 2";
  const std::string out = file("p.json"), journal = out + ".partial.jsonl";
  const pid_t pid = start(args + " --out " + out);
  // Five units of two points a pass: the header, pass 1's ten lines, then pass 2's first unit.
  bool in_second_pass = false;
  for (int i = 0; i < 6000 && !in_second_pass; ++i) {
    in_second_pass = lines(journal) >= 13;
    if (!in_second_pass) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(in_second_pass) << "the second pass never journaled a unit";
  ::kill(pid, SIGTERM);  // to the parent alone: it forwards the stop to the running pass
  ASSERT_EQ(wait(pid), 143) << out_;
  EXPECT_NE(out_.find("pass 2/2"), std::string::npos) << out_;
  const reports::Report part = reports::read_report(out);
  ASSERT_EQ(part.points.size(), 10u);  // every length's points, pooled as far as they ran
  ASSERT_EQ(run(args + " --resume " + out), 0) << out_;
  const reports::Report full = reports::read_report(out);
  EXPECT_FALSE(full.interruption.interrupted);
  EXPECT_EQ(full.context.sweep.at("pass_process"), "fresh");
  ASSERT_EQ(full.points.size(), 10u);
  const auto before = by_key(part);
  size_t grown = 0;  // points whose second pass ran after the resume
  for (const auto& p : full.points) {
    SCOPED_TRACE(p.axes.key());
    ASSERT_EQ(p.step.repetition_rounds.size(), 2u);
    const auto& first = before.at(p.axes.key())->step.samples_ns;
    ASSERT_GE(p.step.samples_ns.size(), first.size());
    EXPECT_TRUE(std::equal(first.begin(), first.end(), p.step.samples_ns.begin()));
    grown += p.step.samples_ns.size() > first.size();
  }
  EXPECT_GE(grown, 2u);
  for (const auto& s : full.speedups) EXPECT_EQ(s.passes, 2) << s.strategy_a << "/" << s.strategy_b;
}

// Fresh pass processes measure one machine: model mode (modeled timings) refuses them by name,
// and its own default stays one pass.
TEST_F(RunCli, ModelModeRefusesFreshPassProcesses) {
  const std::string out = file("m.json");
  EXPECT_EQ(run(kFastBase +
                " --strategy cpu-only --mode model --platform presets --pass-process "
                "fresh --out " +
                out),
            2)
      << out_;
  EXPECT_NE(out_.find("--pass-process fresh applies to measured runs"), std::string::npos) << out_;
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(RunCli, SigtermExits143WithTheFinishedPoints) {
  const std::string out = file("t.json");
  const pid_t pid = start(kSlowSweep + " --out " + out);
  ASSERT_TRUE(wait_for_a_point(out + ".partial.jsonl", pid));
  ::kill(pid, SIGTERM);
  ASSERT_EQ(wait(pid), 143) << out_;
  const reports::Report part = reports::read_report(out);
  EXPECT_TRUE(part.interruption.interrupted);
  EXPECT_NE(part.interruption.reason.find("SIGTERM"), std::string::npos);
  EXPECT_GE(part.points.size(), 2u);
}

TEST_F(RunCli, SecondCtrlCExitsAtOnceTheJournalKeepsThePoints) {
  const std::string out = file("s.json"), journal = out + ".partial.jsonl";
  const pid_t pid = start(kSlowSweep + " --out " + out);
  ASSERT_TRUE(wait_for_a_point(journal, pid));
  ::kill(pid, SIGINT);
  ::kill(pid, SIGINT);  // does not wait for the step in progress
  ASSERT_EQ(wait(pid), 130) << out_;
  EXPECT_GE(lines(journal), 2);  // header + the finished points: --resume can continue
  ASSERT_EQ(run(kSlowSweep + " --resume " + out), 0) << out_;
  EXPECT_EQ(reports::read_report(out).points.size(), 10u);
}

TEST_F(RunCli, FailureMidSweepKeepsFinishedPoints) {
  // HB_TEST_FAIL_AFTER_POINTS (cli/README.md): the error a failed thread creation raises,
  // once 2 points have finished.
  const std::string out = file("f.json");
  ASSERT_EQ(run_with("HB_TEST_FAIL_AFTER_POINTS", "2", kFastSweep + " --out " + out), 1) << out_;
  EXPECT_NE(out_.find("Resource temporarily unavailable"), std::string::npos) << out_;
  const reports::Report part = reports::read_report(out);
  EXPECT_TRUE(part.interruption.interrupted);
  EXPECT_NE(part.interruption.reason.find("internal error"), std::string::npos)
      << part.interruption.reason;
  ASSERT_EQ(part.points.size(), 2u);
  ASSERT_EQ(run(kFastSweep + " --resume " + out), 0) << out_;
  const reports::Report full = reports::read_report(out);
  ASSERT_EQ(full.points.size(), 6u);
  EXPECT_EQ(by_key(full).at(part.points[0].axes.key())->step.samples_ns,
            part.points[0].step.samples_ns);
}

// Issue 18: points that stop on the step cap before the noise target are named on stderr with
// their noise, the target and the fix, even with -q; the run still succeeds.
TEST_F(RunCli, ScopeOptionsRefuseBadInputWithoutWriting) {
  const std::string out = file("scope.json");
  const std::string base =
      "run -q --model qwen2.5-0.5b --seq-len 256 --strategy cpu-only --out " + out;
  EXPECT_EQ(run(base + " --scope everything"), 2) << out_;
  EXPECT_NE(out_.find("attention, layer"), std::string::npos) << out_;
  EXPECT_EQ(run(base + " --microbatches -1"), 2) << out_;
  EXPECT_EQ(run(base + " --scope attention --microbatches 2"), 2) << out_;
  EXPECT_NE(out_.find("needs --scope layer"), std::string::npos) << out_;
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST_F(RunCli, WarnsAboutPointsThatMissTheirNoiseTarget) {
  const std::string out = file("out.json");
  // --max-samples 5 keeps every point under the 6 rounds the noise-floor diagnosis needs: with
  // more, a point whose two halves happen to spread alike is named "this machine's own spread"
  // instead of the max-steps fix, which made this test fail by chance (CI, stop 40).
  ASSERT_EQ(
      run(kFastBase +
          " --strategy cpu-only --accelerator cpu --max-noise 0.0001 --max-samples 5 --out " + out),
      0)
      << out_;
  EXPECT_NE(out_.find("warning: 3 of 3 point(s) stopped before reaching the noise target"),
            std::string::npos)
      << out_;
  EXPECT_NE(out_.find("  cpu-only, seq_len 256, batch 1: noise "), std::string::npos) << out_;
  size_t fixes = 0;
  const std::string fix =
      "stopped on max-steps; raise --max-samples (replays the decode positions) or --decode-steps";
  for (size_t at = out_.find(fix); at != std::string::npos; at = out_.find(fix, at + 1)) ++fixes;
  EXPECT_EQ(fixes, 3u) << "every point names the fix\n" << out_;
  EXPECT_EQ(stdout_.find("warning:"), std::string::npos) << "the warning goes to stderr";
}

// Issue 18: --max-noise is a percent (5 = 5% = 5%), and the report's sweep echo keeps the
// fraction it used under a name that says so.
TEST_F(RunCli, MaxNoiseIsAPercentAndTheEchoKeepsTheFraction) {
  const std::string out = file("out.json");
  ASSERT_EQ(run(kFastBase +
                " --strategy cpu-only --accelerator cpu --max-noise 2.5% "
                "--out " +
                out),
            0)
      << out_;
  const auto r = reports::read_report(out);
  EXPECT_EQ(r.context.sweep.at("max_noise_fraction"), "0.025");
  EXPECT_EQ(r.context.sweep.count("max_noise"), 0u);
}

// Issue 17: --accuracy-target is echoed canonically and `report` reads it back into the
// fastest-within row; the default is mass recall >= 0.9.
TEST_F(RunCli, AccuracyTargetIsEchoedAndNamesTheWithinRow) {
  const std::string out = file("acc.json");
  ASSERT_EQ(run(kFastBase + " --strategy cpu-only --accelerator cpu --out " + out), 0) << out_;
  EXPECT_EQ(reports::read_report(out).context.sweep.at("accuracy_target"), "recall:0.9");
  ASSERT_EQ(
      run(kFastBase + " --strategy cpu-only --accelerator cpu --accuracy-target 0.95 --out " + out),
      0)
      << out_;
  EXPECT_EQ(reports::read_report(out).context.sweep.at("accuracy_target"), "recall:0.95");
  ASSERT_EQ(run("report " + out), 0) << out_;
  EXPECT_NE(out_.find("fastest within recall >= 0.95"), std::string::npos) << out_;
  EXPECT_EQ(run(kFastBase +
                " --strategy cpu-only --accelerator cpu --accuracy-target "
                "rel_l2:0.1 --out " +
                out),
            2)
      << out_;
  EXPECT_NE(out_.find("--accuracy-target"), std::string::npos) << out_;
}

// Host KV on transparent huge pages by default (a KV page is a 4 KiB block: on base pages each
// one is a TLB miss), `--kv-pages 4k` for base pages; the echo says which, a typo is refused.
TEST_F(RunCli, KvPagesAreEchoedReadBackAndTyposRefused) {
  const std::string out = file("pages.json");
  // 16K tokens of qwen2.5-0.5b: 4 MiB of K and of V, so whole huge pages fit.
  const std::string base =
      "run -q --model qwen2.5-0.5b --seq-len 16k --decode-steps 2 --warmup 1 --min-samples 1 "
      "--accuracy-steps 1 --strategy cpu-only --accelerator cpu --host-threads 1 "
      "--accelerator-threads 1 --out " +
      out;
  // Bytes of the host K and V regions on huge pages, as the report read them back.
  auto huge_bytes = [&] {
    const reports::Report r = reports::read_report(out);
    int64_t bytes = 0;
    EXPECT_FALSE(r.points.empty());
    for (const auto& p : r.points)
      for (const auto& region : p.placement) {
        EXPECT_GE(region.observed_huge_page_bytes, 0) << region.role << " not read back";
        bytes += std::max<int64_t>(region.observed_huge_page_bytes, 0);
      }
    return bytes;
  };
  std::ifstream thp_file("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string thp((std::istreambuf_iterator<char>(thp_file)), std::istreambuf_iterator<char>());
  ASSERT_EQ(run(base), 0) << out_;
  EXPECT_EQ(reports::read_report(out).context.sweep.at("kv_pages"), "thp");
  if (thp.find("[madvise]") != std::string::npos || thp.find("[always]") != std::string::npos) {
    EXPECT_GT(huge_bytes(), 0) << "THP is on here (" << thp << ") and the KV got none";
  }
  ASSERT_EQ(run(base + " --kv-pages 4k"), 0) << out_;
  EXPECT_EQ(reports::read_report(out).context.sweep.at("kv_pages"), "4k");
  if (thp.find("[madvise]") != std::string::npos) {
    EXPECT_EQ(huge_bytes(), 0);
  }
  std::filesystem::remove(out);
  EXPECT_EQ(run(kFastBase + " --strategy cpu-only --accelerator cpu --kv-pages 2m --out " + out), 2)
      << out_;
  EXPECT_NE(out_.find("--kv-pages"), std::string::npos) << out_;
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST_F(RunCli, FixableFailuresExitTwoBeforeTheSweep) {
  const std::string out = file("u.json");
  EXPECT_EQ(run(kFastBase + " --strategy cpu-only --accelerator tpu --out " + out), 2) << out_;
  EXPECT_NE(out_.find("unknown accelerator 'tpu'"), std::string::npos) << out_;
  EXPECT_EQ(
      run(kFastBase + " --accelerator cpu --strategy h2o --opt h2o.heavy_ratio=-1 --out " + out), 2)
      << out_;
  EXPECT_NE(out_.find("h2o.heavy_ratio"), std::string::npos) << out_;
  if (!cuda_available()) {
    EXPECT_EQ(run(kFastBase + " --strategy cpu-only --accelerator cuda --out " + out), 2) << out_;
    EXPECT_NE(out_.find("no GPU is usable"), std::string::npos) << out_;
  }
  // Refused before anything ran: no report, and no journal left to block the next run.
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(out + ".partial.jsonl"));
  // Out of accelerator memory is a finding of the sweep, not a failure of the run (4K tokens of
  // this model's KV are 2 MiB; 1 MiB is the smallest capacity --accelerator-memory takes).
  ASSERT_EQ(run("run --model qwen2.5-0.5b --seq-len 4k --decode-steps 4 --warmup 1 --min-samples 2 "
                "--accuracy-steps 1 "
                "--accelerator-threads 1 --host-threads 1 -q --strategy cpu-only,full-gpu "
                "--accelerator cpu "
                "--accelerator-memory 1M --out " +
                out),
            0)
      << out_;
  const reports::Report r = reports::read_report(out);
  bool oom = false;
  for (const auto& p : r.points) oom |= p.status == reports::PointStatus::oom;
  EXPECT_TRUE(oom);
}

// With no --accelerator-memory the cpu accelerator's KV budget is chosen so that the sweep
// crosses the fit boundary (bench/kv_budget.h): the shortest length fits, the longer two
// do not; the report, its summary and its tables say how much fits where.
TEST_F(RunCli, DefaultBudgetPutsTheSweepOnBothSidesOfTheFitBoundary) {
  const std::string out = file("kv.json");
  const std::string sweep =
      "run --model qwen2.5-0.5b --seq-len 1k,4k,8k --decode-steps 4 --warmup 1 --min-samples 2 "
      "--accuracy-steps 1 --accelerator-threads 1 --host-threads 1 --strategy cpu-only,full-gpu "
      "--accelerator cpu";
  ASSERT_EQ(run(sweep + " --out " + out), 0) << out_;
  EXPECT_NE(out_.find("kv fit"), std::string::npos) << out_;
  const reports::Report r = reports::read_report(out);
  std::set<int64_t> fit, short_of;
  for (const auto& p : r.points) {
    ASSERT_TRUE(p.kv_fit_fraction.has_value());
    (*p.kv_fit_fraction >= 1 ? fit : short_of).insert(p.axes.seq_len);
  }
  EXPECT_GE(fit.size(), 1u);
  EXPECT_GE(short_of.size(), 2u);
  EXPECT_LT(*fit.rbegin(), *short_of.begin());  // fits below the boundary, not above
  ASSERT_EQ(run("report " + out), 0) << out_;
  EXPECT_NE(out_.find("| KV on accelerator "), std::string::npos) << out_;
  EXPECT_NE(out_.find("stops fitting the accelerator's KV budget at 4k"), std::string::npos)
      << out_;
  // The explicit override still wins: 2G holds all of it.
  ASSERT_EQ(run(sweep + " -q --accelerator-memory 2G --out " + out), 0) << out_;
  for (const auto& p : reports::read_report(out).points) EXPECT_EQ(p.kv_fit_fraction, 1.0);
  // And bad values stay usage errors.
  EXPECT_EQ(run(sweep + " -q --accelerator-memory 0 --out " + out), 2) << out_;
  EXPECT_EQ(run(sweep + " -q --accelerator-memory lots --out " + out), 2) << out_;
  // --help-all says where the default comes from.
  ASSERT_EQ(run("run --help-all"), 0);
  EXPECT_NE(out_.find("twice the KV of the"), std::string::npos) << out_;
}

}  // namespace
}  // namespace hb::bench
