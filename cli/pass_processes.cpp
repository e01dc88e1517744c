#include "cli/pass_processes.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include "cli/interrupt.h"
#include "core/error.h"
#include "reports/json_io.h"

namespace hb::cli {

namespace {

// What a child sends back: 'R' <exit code> '\n' <report JSON>, or 'E' <exit code> '\n'
// <problem> '\n' <fix> for an error before any point ran.
std::string report_frame(const reports::Report& r) {
  return "R" + std::to_string(r.interruption.exit_code) + "\n" + reports::to_json_text(r);
}
std::string error_frame(int code, const std::string& problem, const std::string& fix) {
  return "E" + std::to_string(code) + "\n" + problem + "\n" + fix;
}

void write_all(int fd, const std::string& text) {
  size_t at = 0;
  while (at < text.size()) {
    const ssize_t n = ::write(fd, text.data() + at, text.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the parent is gone: nobody to tell
    at += static_cast<size_t>(n);
  }
}

// The child: run the pass, send its frame, and leave without unwinding the parent's state
// (destructors and atexit handlers are the parent's to run).
[[noreturn]] void run_child(int fd, const bench::ResolvedSweep& pass, const PassProcessHooks& h,
                            pid_t parent) {
  // A parent that ends (killed outright, or at once on a second Ctrl-C) takes its pass with it:
  // the pass's finished units are in the journal, and no orphan keeps appending to it or
  // holding the --out lock.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(kExitFailure);  // it ended before prctl took effect
  InterruptGuard::repeated_signals_only_stop();
  std::string frame;
  int code = kExitOk;
  try {
    frame = report_frame(h.run_pass(pass));
  } catch (const Error& e) {
    code = e.exit_code();
    frame = error_frame(code, e.problem(), e.fix());
  } catch (const std::exception& e) {
    code = kExitFailure;
    frame = error_frame(code, std::string("internal error: ") + e.what(), "");
  }
  write_all(fd, frame);
  ::close(fd);
  std::fflush(nullptr);
  ::_exit(code);
}

size_t thread_count() {
  size_t n = 0;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator("/proc/self/task", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
    ++n;
  return n;
}

std::string pass_name(int pass, int passes) {
  return "pass " + std::to_string(pass + 1) + "/" + std::to_string(passes);
}

// How a child that sent no frame ended.
std::string child_end(int status) {
  if (WIFSIGNALED(status))
    return std::string("ended by signal ") + std::to_string(WTERMSIG(status)) + " (" +
           strsignal(WTERMSIG(status)) + ")";
  return "exited with status " + std::to_string(WEXITSTATUS(status)) + " without a report";
}

// Reads the child's frame to its end, forwarding a stop the parent was asked for (its
// handlers restart reads, so the pipe is polled).
std::string read_frame(int fd, pid_t child, const PassProcessHooks& h) {
  std::string text;
  char buf[1 << 16];
  bool forwarded = false;
  for (;;) {
    if (!forwarded && h.stop_signal && h.stop_signal() != 0) {
      ::kill(child, h.stop_signal());
      forwarded = true;
    }
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, 200);
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  return text;
}

struct PassResult {
  std::optional<reports::Report> report;
  std::optional<Error> error;  // the child's error, or how it died
};

PassResult run_one_pass(const bench::ResolvedSweep& sweep, int pass, const PassProcessHooks& h) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw Error(std::string("cannot make a pipe for a --repetitions pass: ") + std::strerror(errno),
                "free file descriptors, or add --pass-process same", kExitFailure);
  std::fflush(nullptr);  // buffered output would otherwise be written twice
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw Error(std::string("cannot fork a --repetitions pass: ") + std::strerror(errno),
                "free memory or processes, or add --pass-process same", kExitFailure);
  }
  if (child == 0) {
    ::close(fds[0]);
    bench::ResolvedSweep one = sweep;
    one.spec.only_pass = pass;
    run_child(fds[1], one, h, parent);
  }
  ::close(fds[1]);
  const std::string frame = read_frame(fds[0], child, h);
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  const std::string where = pass_name(pass, sweep.spec.repetitions);
  const size_t eol = frame.find('\n');
  if (frame.size() < 2 || eol == std::string::npos || (frame[0] != 'R' && frame[0] != 'E'))
    return {std::nullopt, Error(where + "'s process " + child_end(status),
                                "re-run with --pass-process same to see the failure in one "
                                "process",
                                kExitFailure)};
  const int code = std::atoi(frame.substr(1, eol - 1).c_str());
  if (frame[0] == 'E') {
    const std::string rest = frame.substr(eol + 1);
    const size_t fix_at = rest.find('\n');
    return {std::nullopt, Error(rest.substr(0, fix_at),
                                fix_at == std::string::npos ? "" : rest.substr(fix_at + 1), code)};
  }
  PassResult r;
  r.report = reports::from_json_text(frame.substr(eol + 1), where);
  r.report->interruption.exit_code = code;  // process state: not in the JSON
  return r;
}

}  // namespace

reports::Report run_passes_in_processes(const bench::ResolvedSweep& sweep,
                                        const PassProcessHooks& hooks) {
  if (const size_t threads = thread_count(); threads > 1)
    throw Error(std::to_string(threads) +
                    " threads run before the --repetitions passes fork (a profiler or debugger "
                    "adds its own), and a fork would copy a lock one of them holds",
                "add --repetitions 1, or --pass-process same (every pass in this process)",
                kExitFailure);
  const int passes = sweep.spec.repetitions;
  std::optional<reports::Report> pooled;
  for (int pass = 0; pass < passes; ++pass) {
    if (hooks.stop_signal && hooks.stop_signal() != 0) break;
    PassResult r = run_one_pass(sweep, pass, hooks);
    const std::string where = pass_name(pass, passes);
    if (r.error) {
      if (!pooled || pooled->points.empty()) throw *r.error;
      pooled->interruption = {true,
                              where + ": " + r.error->problem() +
                                  (r.error->fix().empty() ? "" : " (fix: " + r.error->fix() + ")"),
                              r.error->exit_code()};
      break;
    }
    const reports::Interruption stopped = r.report->interruption;
    if (!pooled) {
      pooled = std::move(*r.report);
    } else {
      bench::pool_pass_report(*pooled, std::move(*r.report));
      pooled->interruption = stopped;
    }
    if (stopped.interrupted) {
      pooled->interruption.reason = where + ": " + stopped.reason;
      break;
    }
  }
  if (!pooled) {  // stopped before the first pass began
    reports::Report none;
    none.interruption = {true, "stopped before the first pass", kExitFailure};
    return none;
  }
  return std::move(*pooled);
}

}  // namespace hb::cli
