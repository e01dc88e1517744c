// Every way a `hybridbench run` can end keeps its finished points, and leaves nothing that blocks
// the next run (cli/run_session.h, cli/pass_processes.h, cli/out_lock.h), through the binary:
//   * signals: Ctrl-C typed on a pseudo-terminal, and the two copies of it a pass process gets
//     (from the terminal and from its parent) in the order that used to lose every point, SIGTERM
//     to the group, SIGHUP (terminal closed), SIGKILL of a pass process (an OOM kill), a pass
//     process that crashes (the documented hook HB_TEST_CRASH_AFTER_POINTS): the finished points
//     are in the report or the journal, and --resume completes the run;
//   * faults: a file-size limit, a full disk at the start (the journal's header cannot be
//     written), a closed pipe after the report, a journal left without its header, two runs on
//     one --out, an --out name without room for its journal: no leftover blocks a later run.
// The default three passes in fresh processes unless said, on units of a second or two.
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "reports/json_io.h"
#include "tests/cli_fixture.h"

namespace hb::cli {
namespace {

namespace fs = std::filesystem;

// Two units of two points a pass, each ending on its --timeout. The 8k unit's setup (workload,
// exact reference) polls no stop for a while: a signal that lands there reaches a pass process
// that is still running when its parent forwards the copy.
const std::string kSweep =
    "run --model qwen2.5-0.5b --seq-len 1k,8k --decode-steps 4 --strategy cpu-only,quest "
    "--timeout 0.3 -q";
// One pass of one unit.
const std::string kOnePass =
    "run --model qwen2.5-0.5b --seq-len 1k --decode-steps 4 --strategy cpu-only,quest "
    "--timeout 0.3 --repetitions 1 -q";

int lines(const std::string& path) {
  std::ifstream in(path);
  int n = 0;
  for (std::string l; std::getline(in, l);) ++n;
  return n;
}

class RunLifecycle : public cli_test::CliTest {
 protected:
  // Starts hybridbench as a shell starts a job (its pid is its process group's id); `env`
  // (NAME=VALUE) is set for it, `fsize_limit` >= 0 caps the files it writes (ulimit -f).
  pid_t start(const std::string& args, const std::string& env = "", long fsize_limit = -1) {
    return CliTest::start(args, {env, fsize_limit, true});
  }
  // Waits until the journal has `n` lines (the header is one); false if the run ended first.
  static bool wait_for_lines(const std::string& journal, int n, pid_t pid) {
    for (int i = 0; i < 6000; ++i) {
      if (lines(journal) >= n) return true;
      int st = 0;
      if (::waitpid(pid, &st, WNOHANG) == pid) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
  // The pass process the run has forked (0: none now).
  static pid_t pass_process_of(pid_t parent) {
    for (const auto& e : fs::directory_iterator("/proc")) {
      const std::string name = e.path().filename().string();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;  // not a process
      std::ifstream stat(e.path() / "stat");
      std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
      const size_t close = text.rfind(')');
      if (close == std::string::npos) continue;
      std::istringstream rest(text.substr(close + 2));
      char state = 0;
      pid_t ppid = 0;
      rest >> state >> ppid;
      if (ppid == parent) return static_cast<pid_t>(std::stol(name));
    }
    return 0;
  }
  // Files a run may leave in the test's folder besides the report and journal: a temporary
  // file or a lock.
  std::vector<std::string> leftovers() const {
    std::vector<std::string> v;
    for (const auto& e : fs::directory_iterator(dir_)) {
      const std::string name = e.path().filename().string();
      if (name.find(".tmp") != std::string::npos || name.find(".lock") != std::string::npos)
        v.push_back(name);
    }
    return v;
  }
  // After a run that ended early: the finished points are in the report or the journal, and
  // `--resume` completes the sweep (4 points), leaving only the report.
  void expect_kept_then_resumed(const std::string& args, const std::string& out, size_t at_least) {
    const std::string journal = out + ".partial.jsonl";
    size_t reported = 0;
    if (fs::exists(out)) {
      const reports::Report part = reports::read_report(out);
      EXPECT_TRUE(part.interruption.interrupted);
      reported = part.points.size();
    }
    const int64_t journaled = fs::exists(journal) ? lines(journal) - 1 : 0;
    EXPECT_GE(std::max<int64_t>(static_cast<int64_t>(reported), journaled),
              static_cast<int64_t>(at_least))
        << "finished points lost\n"
        << out_;
    ASSERT_TRUE(fs::exists(journal)) << out_;
    EXPECT_NE(out_.find("--resume " + out), std::string::npos) << out_;
    EXPECT_TRUE(leftovers().empty()) << leftovers().front();
    ASSERT_EQ(run(args + " --resume " + out), 0) << out_;
    const reports::Report full = reports::read_report(out);
    EXPECT_FALSE(full.interruption.interrupted);
    EXPECT_EQ(full.points.size(), 4u);
    EXPECT_FALSE(fs::exists(journal));
    EXPECT_TRUE(leftovers().empty()) << leftovers().front();
  }
};

// A terminal's Ctrl-C reaches the run and its pass process alike, during the first pass. It is
// sent as the kernel may deliver it to the group: to the pass process first, then (a moment
// later, so the two copies the pass then gets are not merged into one pending signal) to the
// run, which forwards its own.
TEST_F(RunLifecycle, CtrlCToTheGroupInTheFirstPassKeepsItsPoints) {
  const std::string out = file("c.json");
  const pid_t pid = start(kSweep + " --out " + out);
  ASSERT_TRUE(wait_for_lines(out + ".partial.jsonl", 3, pid)) << "no unit was journaled";
  const pid_t pass = pass_process_of(pid);
  ASSERT_GT(pass, 0);
  ::kill(pass, SIGINT);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ::kill(pid, SIGINT);
  ASSERT_EQ(wait(pid), 130) << out_;
  EXPECT_NE(out_.find("SIGINT"), std::string::npos) << out_;
  EXPECT_EQ(out_.find("second interrupt"), std::string::npos) << "one Ctrl-C is one stop\n" << out_;
  ASSERT_TRUE(fs::exists(out)) << out_;
  expect_kept_then_resumed(kSweep, out, 2);
}

// The real thing: Ctrl-C typed on the run's terminal (a pseudo-terminal), which the line
// discipline sends to the whole foreground process group.
TEST_F(RunLifecycle, CtrlCTypedOnATerminalKeepsThePoints) {
  const std::string out = file("pty.json");
  std::vector<std::string> argv_s = cli_test::split_args(kSweep + " --out " + out);
  argv_s.insert(argv_s.begin(), HB_BINARY);
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  int master = -1;
  const pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
  if (pid == 0) {
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ASSERT_GT(pid, 0);
  std::string output;
  auto drain = [&](int wait_ms) {
    pollfd p{master, POLLIN, 0};
    char buf[4096];
    while (::poll(&p, 1, wait_ms) > 0) {
      const ssize_t n = ::read(master, buf, sizeof buf);
      if (n <= 0) return false;  // EIO: the run closed the terminal
      output.append(buf, static_cast<size_t>(n));
    }
    return true;
  };
  for (int i = 0; i < 3000 && lines(out + ".partial.jsonl") < 3; ++i) drain(10);
  ASSERT_GE(lines(out + ".partial.jsonl"), 3) << output;
  ASSERT_EQ(::write(master, "\x03", 1), 1);
  while (drain(200)) {
  }
  ::close(master);
  int st = 0;
  ::waitpid(pid, &st, 0);
  out_ = output;
  ASSERT_TRUE(WIFEXITED(st)) << output;
  ASSERT_EQ(WEXITSTATUS(st), 130) << output;
  ASSERT_TRUE(fs::exists(out)) << output;
  expect_kept_then_resumed(kSweep, out, 2);
}

// A batch scheduler's SIGTERM to the group in the second pass; the resumed run counts each
// resumed point once, not once per pass.
TEST_F(RunLifecycle, SigtermToTheGroupInTheSecondPassKeepsItsPoints) {
  const std::string out = file("t.json");
  const pid_t pid = start(kSweep + " --out " + out);
  // The header, pass 1's four points, and pass 2's first unit.
  ASSERT_TRUE(wait_for_lines(out + ".partial.jsonl", 7, pid)) << "pass 2 journaled no unit";
  ::kill(-pid, SIGTERM);
  ASSERT_EQ(wait(pid), 143) << out_;
  ASSERT_TRUE(fs::exists(out)) << out_;
  EXPECT_EQ(reports::read_report(out).points.size(), 4u);
  expect_kept_then_resumed(kSweep, out, 4);
  EXPECT_NE(out_.find("4 points, 4 of them resumed from the journal: 6 point passes)"),
            std::string::npos)
      << out_;
}

// Closing the terminal: SIGHUP to the group is a stop like SIGTERM, exit 129.
TEST_F(RunLifecycle, SighupWritesTheInterruptedReport) {
  const std::string out = file("h.json");
  const pid_t pid = start(kSweep + " --out " + out);
  ASSERT_TRUE(wait_for_lines(out + ".partial.jsonl", 3, pid)) << "no unit was journaled";
  ::kill(-pid, SIGHUP);
  ASSERT_EQ(wait(pid), 129) << out_;
  ASSERT_TRUE(fs::exists(out)) << out_;
  EXPECT_NE(reports::read_report(out).interruption.reason.find("SIGHUP"), std::string::npos);
  expect_kept_then_resumed(kSweep, out, 2);
}

// An OOM kill of the first pass's process: no report from it, but its journaled points stay.
TEST_F(RunLifecycle, SigkillOfThePassProcessKeepsItsPoints) {
  const std::string out = file("k.json");
  const pid_t pid = start(kSweep + " --out " + out);
  ASSERT_TRUE(wait_for_lines(out + ".partial.jsonl", 3, pid)) << "no unit was journaled";
  const pid_t pass = pass_process_of(pid);
  ASSERT_GT(pass, 0);
  ::kill(pass, SIGKILL);
  ASSERT_EQ(wait(pid), 1) << out_;
  EXPECT_NE(out_.find("ended by signal 9"), std::string::npos) << out_;
  expect_kept_then_resumed(kSweep, out, 2);
}

// A pass process that crashes after its first unit (HB_TEST_CRASH_AFTER_POINTS, cli/README.md).
TEST_F(RunLifecycle, ACrashedPassProcessKeepsItsPoints) {
  const std::string out = file("x.json");
  const pid_t pid = start(kSweep + " --out " + out, "HB_TEST_CRASH_AFTER_POINTS=2");
  ASSERT_EQ(wait(pid), 1) << out_;
  EXPECT_NE(out_.find("ended by signal 11"), std::string::npos) << out_;
  expect_kept_then_resumed(kSweep, out, 2);
}

// ulimit -f: the write past the limit fails (EFBIG) instead of killing the run, and leaves no
// temporary file; what is there is resumed.
TEST_F(RunLifecycle, AFileSizeLimitLeavesNothingThatBlocks) {
  const std::string out = file("f.json");
  const pid_t pid = start(kOnePass + " --out " + out, "", 10 * 1024);
  ASSERT_EQ(wait(pid), 1) << "not killed by SIGXFSZ: exit 1 naming the error\n" << out_;
  EXPECT_NE(out_.find("File too large"), std::string::npos) << out_;
  EXPECT_TRUE(leftovers().empty()) << leftovers().front();
  const bool journaled = fs::exists(out + ".partial.jsonl");
  ASSERT_EQ(run(kOnePass + (journaled ? " --resume " : " --out ") + out), 0) << out_;
  EXPECT_EQ(reports::read_report(out).points.size(), 2u);
  EXPECT_TRUE(leftovers().empty()) << leftovers().front();
}

// A full disk at the start: the journal's header cannot be written (EFBIG under a 0-byte
// file-size limit fails the same write ENOSPC does). No journal is left; the next run runs. A
// journal left without its header (an older build, a crash before it reached the disk) is no
// journal either: --resume says there is none, a new run replaces it.
TEST_F(RunLifecycle, AJournalWithoutItsHeaderNeverBlocks) {
  const std::string out = file("d.json"), journal = out + ".partial.jsonl";
  ASSERT_EQ(wait(start(kOnePass + " --out " + out, "", 0)), 1) << out_;
  EXPECT_FALSE(fs::exists(journal)) << out_;
  EXPECT_TRUE(leftovers().empty()) << leftovers().front();
  std::ofstream(journal).close();  // 0 bytes
  EXPECT_EQ(run(kOnePass + " --resume " + out), 2) << out_;
  EXPECT_NE(out_.find("no sweep journal to resume from"), std::string::npos) << out_;
  EXPECT_EQ(out_.find("damaged"), std::string::npos) << out_;
  ASSERT_EQ(run(kOnePass + " --out " + out), 0) << out_;
  EXPECT_FALSE(fs::exists(journal));
}

// `run ... | true`: the summary meets a closed pipe after the report is written. The complete
// report needs no journal, so the next run onto it is not refused as interrupted.
TEST_F(RunLifecycle, AClosedPipeAfterTheReportLeavesNoStaleJournal) {
  const std::string out = file("p.json");
  const std::string args = kOnePass.substr(0, kOnePass.size() - 3);  // without -q: a summary
  const std::string cmd =
      std::string(HB_BINARY) + " " + args + " --out " + out + " 2> " + file("err.txt") + " | true";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  ASSERT_TRUE(fs::exists(out));
  EXPECT_FALSE(reports::read_report(out).interruption.interrupted);
  EXPECT_FALSE(fs::exists(out + ".partial.jsonl"));
  EXPECT_TRUE(leftovers().empty()) << leftovers().front();
  EXPECT_EQ(run(kOnePass + " --out " + out), 0) << out_;
}

// Two runs on one --out: the second (and a --resume of the first) is refused naming the first's
// pid, and the first completes with every point.
TEST_F(RunLifecycle, ASecondRunOnTheSameOutIsRefused) {
  const std::string out = file("two.json"), args = kSweep + " --repetitions 1";
  const pid_t pid = start(args + " --out " + out);
  ASSERT_TRUE(wait_for_lines(out + ".partial.jsonl", 1, pid)) << "the first run ended at once";
  EXPECT_EQ(run(args + " --out " + out), 2) << out_;
  EXPECT_NE(out_.find("pid " + std::to_string(pid)), std::string::npos) << out_;
  EXPECT_EQ(run(args + " --resume " + out), 2) << out_;
  ASSERT_EQ(wait(pid), 0) << out_;
  EXPECT_EQ(reports::read_report(out).points.size(), 4u);
  EXPECT_TRUE(leftovers().empty()) << leftovers().front();
}

// A legal name (255 characters is the usual limit) without room for the journal's suffix: exit 2
// before the sweep, naming the limit and the longest name that works.
TEST_F(RunLifecycle, AnOutNameWithoutRoomForItsJournalIsRefusedUpFront) {
  const std::string out = file(std::string(245, 'n') + ".json");
  EXPECT_EQ(run(kOnePass + " --out " + out), 2) << out_;
  EXPECT_NE(out_.find("limit of 255"), std::string::npos) << out_;
  EXPECT_NE(out_.find("at most 241 characters"), std::string::npos) << out_;
  EXPECT_TRUE(fs::is_empty(dir_) || !fs::exists(out));
}

// Resuming with another --repetitions names --repetitions, not the --pass-process it implies.
TEST_F(RunLifecycle, ResumeWithOtherRepetitionsNamesRepetitions) {
  const std::string out = file("r.json");
  const pid_t pid = start(kSweep + " --out " + out, "HB_TEST_FAIL_AFTER_POINTS=2");
  ASSERT_EQ(wait(pid), 1) << out_;
  ASSERT_TRUE(fs::exists(out + ".partial.jsonl")) << out_;
  EXPECT_EQ(run(kSweep + " --repetitions 1 --resume " + out), 2) << out_;
  EXPECT_NE(out_.find("option --repetitions differs"), std::string::npos) << out_;
  EXPECT_EQ(out_.find("--pass-process"), std::string::npos) << out_;
}

// A journal line edited to another sequence length is no point that ran: --resume refuses the
// journal (exit 2) instead of reporting the edited point beside the sweep's own.
TEST_F(RunLifecycle, ResumeRefusesAJournaledPointOfAnotherUnit) {
  const std::string out = file("e.json");
  const pid_t pid = start(kSweep + " --out " + out, "HB_TEST_FAIL_AFTER_POINTS=2");
  ASSERT_EQ(wait(pid), 1) << out_;
  const std::string journal = out + ".partial.jsonl";
  std::ifstream in(journal);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t at = text.find("\"seq_len\":1024", text.find('\n'));
  ASSERT_NE(at, std::string::npos) << text.substr(0, 400);
  text.replace(at, 14, "\"seq_len\":3000");
  std::ofstream(journal, std::ios::trunc) << text;
  EXPECT_EQ(run(kSweep + " --resume " + out), 2) << out_;
  EXPECT_NE(out_.find("seq_len 3000, the unit's is 1024"), std::string::npos) << out_;
  EXPECT_FALSE(fs::exists(out) && !reports::read_report(out).interruption.interrupted);
}

}  // namespace
}  // namespace hb::cli
