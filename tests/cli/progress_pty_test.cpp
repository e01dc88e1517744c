// The progress bar on a terminal (cli/progress.*): drawn in place on stderr and cleared however
// the run ends, here by Ctrl-C (SIGINT) mid-sweep and by a normal finish. The binary runs on a
// pseudo-terminal (forkpty), so it takes the terminal branch as a user's shell would.
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/cli_fixture.h"

namespace {

struct PtyRun {
  int status = -1;
  std::string output;  // everything the child wrote to the terminal
};

// Runs HB_BINARY with `args` (split on spaces) on a pty; sends `sig` once `trigger` has appeared
// in the output (sig 0: never). Gives up after 120 s.
PtyRun run_on_pty(const std::vector<std::string>& args, const std::string& trigger, int sig) {
  PtyRun r;
  int master = -1;
  const pid_t pid = forkpty(&master, nullptr, nullptr, nullptr);
  if (pid == 0) {
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(HB_BINARY));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(HB_BINARY, argv.data());
    ::_exit(127);
  }
  if (pid < 0) return r;
  bool sent = false;
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    pollfd p{master, POLLIN, 0};
    if (::poll(&p, 1, 200) > 0) {
      char buf[4096];
      const ssize_t n = ::read(master, buf, sizeof buf);
      if (n <= 0) break;  // EIO: the child closed the terminal
      r.output.append(buf, static_cast<size_t>(n));
    }
    if (sig && !sent && r.output.find(trigger) != std::string::npos) {
      ::kill(pid, sig);
      sent = true;
    }
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(120)) {
      ::kill(pid, SIGKILL);
      break;
    }
  }
  ::close(master);
  ::waitpid(pid, &r.status, 0);
  return r;
}

// After the last bar drawn ("ETA ..."), the line is blanked: "\r", spaces, "\r".
bool bar_cleared(const std::string& out) {
  const size_t last = out.rfind("ETA");
  if (last == std::string::npos) return false;
  return std::regex_search(out.substr(last), std::regex("\r {20,}\r"));
}

// The fixture's SetUp skips without the binary and makes the temporary folder.
class ProgressPty : public hb::cli_test::CliTest {
 protected:
  std::vector<std::string> sweep(int steps) const {
    return {"run",
            "--model",
            "qwen2.5-0.5b",
            "--seq-len",
            "1k,2k",
            "--decode-steps",
            std::to_string(steps),
            "--warmup",
            "1",
            "--min-samples",
            std::to_string(steps),
            "--accuracy-steps",
            "1",
            "--accelerator",
            "cpu",
            "--accelerator-threads",
            "1",
            "--host-threads",
            "1",
            "--strategy",
            "cpu-only",
            "--out",
            dir_ + "/r.json"};  // the fixture's folder: parallel tests must not share an --out
  }
};

TEST_F(ProgressPty, BarIsClearedOnCtrlC) {
  const PtyRun r = run_on_pty(sweep(3000), "ETA", SIGINT);
  ASSERT_TRUE(WIFEXITED(r.status)) << r.output;
  EXPECT_EQ(WEXITSTATUS(r.status), 130) << r.output;
  EXPECT_TRUE(bar_cleared(r.output)) << r.output;
}

TEST_F(ProgressPty, BarIsClearedAtTheEnd) {
  const PtyRun r = run_on_pty(sweep(4), "", 0);
  ASSERT_TRUE(WIFEXITED(r.status)) << r.output;
  EXPECT_EQ(WEXITSTATUS(r.status), 0) << r.output;
  EXPECT_TRUE(bar_cleared(r.output)) << r.output;
}

}  // namespace
