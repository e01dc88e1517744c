#include "cli/ab_run.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "bench/runner.h"
#include "cli/interrupt.h"
#include "core/error.h"
#include "reports/json_io.h"
#include "reports/output_file.h"

namespace hb::cli {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

void check_binary(const std::string& what, const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw Error("compare --ab: " + what + " binary '" + path + "' does not exist",
                "give the path to a built hybridbench (build/cli/hybridbench)");
  if (!S_ISREG(st.st_mode) || ::access(path.c_str(), X_OK) != 0)
    throw Error("compare --ab: " + what + " binary '" + path + "' is not an executable file",
                "give the path to a built hybridbench, or chmod +x it");
}

// "--out=x" and "--out" both name --out.
std::string option_name(const std::string& arg) { return arg.substr(0, arg.find('=')); }

// The folder the passes write into: created, or an existing empty one.
std::string prepare_dir(std::string dir) {
  if (dir.empty()) {
    char stamp[32];
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    ::gmtime_r(&now, &tm);
    std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    dir = std::string("hybridbench-ab-") + stamp;
  }
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw Error("compare --ab-dir '" + dir + "' is a file", "name a new or empty folder");
  if (fs::is_directory(dir, ec) && !fs::is_empty(dir, ec))
    throw Error("compare --ab-dir '" + dir + "' already holds files (another A/B's passes?)",
                "name a new or empty folder, or remove that one");
  fs::create_directories(dir, ec);
  if (ec || ::access(dir.c_str(), W_OK) != 0)
    throw Error("compare --ab-dir '" + dir + "' cannot be created or written: " + ec.message(),
                "name a folder this user may write");
  return dir;
}

std::string tail_of(const std::string& log, int lines) {
  std::ifstream in(log);
  std::vector<std::string> all;
  for (std::string l; std::getline(in, l);) all.push_back(l);
  std::string out;
  for (size_t i = all.size() > size_t(lines) ? all.size() - lines : 0; i < all.size(); ++i)
    out += "\n    " + all[i];
  return out;
}

// Starts `argv` with both streams to `log`, in a process group of its own (a terminal's Ctrl-C
// reaches only this process, which forwards it once), dying with this process.
pid_t spawn(const std::vector<std::string>& args, const std::string& log) {
  std::vector<char*> argv;
  std::vector<std::string> copy = args;
  for (auto& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    throw Error("compare --ab: cannot write " + log + ": " + std::strerror(errno),
                "free disk space or name another --ab-dir", kExitFailure);
  std::fflush(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {  // only async-signal-safe calls until exec
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(kExitFailure);
    ::dup2(fd, STDOUT_FILENO);
    ::dup2(fd, STDERR_FILENO);
    ::execv(argv[0], argv.data());
    static const char msg[] = "hybridbench: compare --ab: exec failed\n";
    (void)!::write(STDERR_FILENO, msg, sizeof msg - 1);
    ::_exit(kExitFailure);
  }
  ::close(fd);
  if (pid < 0)
    throw Error(std::string("compare --ab: cannot fork a pass: ") + std::strerror(errno),
                "free memory or processes", kExitFailure);
  return pid;
}

// Waits for a pass, forwarding a stop signal once; its exit status (128 + signal if killed).
int wait_pass(pid_t pid, const InterruptGuard& guard) {
  bool forwarded = false;
  for (;;) {
    if (!forwarded && guard.requested()) {
      ::kill(pid, guard.signal());
      forwarded = true;
    }
    int st = 0;
    const pid_t done = ::waitpid(pid, &st, WNOHANG);
    if (done == pid) return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    if (done < 0 && errno != EINTR) return kExitFailure;
    ::usleep(50 * 1000);
  }
}

struct Pass {
  bool is_new;
  int index;  // 1-based, per binary
};

// Counterbalanced pairs: A B, B A, A B, ...
std::vector<Pass> pass_order(int passes) {
  std::vector<Pass> order;
  for (int k = 1; k <= passes; ++k) {
    const bool new_first = k % 2 == 0;
    order.push_back({new_first, k});
    order.push_back({!new_first, k});
  }
  return order;
}

std::string side(bool is_new) { return is_new ? "new" : "old"; }

std::string seconds(Clock::duration d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(d).count()) + " s";
}

class AbRunner {
 public:
  AbRunner(const AbSpec& spec, std::string dir, bool set_repetitions)
      : spec_(spec), dir_(std::move(dir)), set_repetitions_(set_repetitions), guard_(dir_) {}

  // Runs every pass; the report paths of each side, in pass order.
  void run_all() {
    const std::vector<Pass> order = pass_order(spec_.passes);
    const auto start = Clock::now();
    for (size_t i = 0; i < order.size(); ++i) {
      const std::string path = run_one(order[i], i, order.size());
      (order[i].is_new ? new_paths_ : old_paths_).push_back(path);
      if (!spec_.quiet) {
        const auto spent = Clock::now() - start;
        const auto left = spent / static_cast<int>(i + 1) * static_cast<int>(order.size() - i - 1);
        std::cerr << "hybridbench: compare --ab: " << i + 1 << "/" << order.size() << " done, "
                  << seconds(spent) << " so far, about " << seconds(left) << " left\n";
      }
    }
  }
  const std::vector<std::string>& paths(bool is_new) const {
    return is_new ? new_paths_ : old_paths_;
  }

 private:
  std::string run_one(const Pass& p, size_t at, size_t total) {
    const std::string stem =
        (fs::path(dir_) / (side(p.is_new) + "-" + std::to_string(p.index))).string();
    const std::string& bin = p.is_new ? spec_.new_bin : spec_.old_bin;
    std::vector<std::string> argv{bin};
    argv.insert(argv.end(), spec_.run_args.begin(), spec_.run_args.end());
    if (set_repetitions_) argv.insert(argv.end(), {"--repetitions", "1"});
    argv.insert(argv.end(), {"--out", stem + ".json"});
    if (!spec_.quiet)
      std::cerr << "hybridbench: compare --ab: " << at + 1 << "/" << total << ": " << side(p.is_new)
                << " pass " << p.index << "/" << spec_.passes << " (" << bin << "), log " << stem
                << ".log\n";
    if (guard_.requested()) stopped(at);
    const int code = wait_pass(spawn(argv, stem + ".log"), guard_);
    if (guard_.requested()) stopped(at);
    // Exit 1 with a complete report is a point that failed: a finding compare judges.
    const bool usable =
        code == kExitOk || (code == kExitFailure && fs::exists(stem + ".json") &&
                            !reports::read_report(stem + ".json").interruption.interrupted);
    if (!usable)
      throw Error("compare --ab: the " + side(p.is_new) + " binary's pass " +
                      std::to_string(p.index) + " exited " + std::to_string(code) +
                      "; the end of " + stem + ".log:" + tail_of(stem + ".log", 8),
                  "fix what the log says (the same run ARGS must work with both binaries)",
                  code == kExitUsage ? kExitUsage : kExitFailure);
    return stem + ".json";
  }
  [[noreturn]] void stopped(size_t finished) {
    throw Error("compare --ab: stopped by " + guard_.signal_text() + " after " +
                    std::to_string(finished) + " of " + std::to_string(2 * spec_.passes) +
                    " passes; their reports and logs are in " + dir_,
                "compare the finished passes by hand (hybridbench compare " + dir_ +
                    "/old-1.json " + dir_ + "/new-1.json), or run the A/B again",
                guard_.exit_code());
  }

  const AbSpec& spec_;
  std::string dir_;
  bool set_repetitions_;
  InterruptGuard guard_;
  std::vector<std::string> old_paths_, new_paths_;
};

// One side's passes pooled as `run` pools its own (bench::pool_pass_report).
reports::Report pool(const std::vector<reports::Report>& passes) {
  reports::Report pooled = passes.at(0);
  for (size_t i = 1; i < passes.size(); ++i)
    bench::pool_pass_report(pooled, reports::Report(passes[i]));
  return pooled;
}

std::vector<reports::Report> read_all(const std::vector<std::string>& paths) {
  std::vector<reports::Report> out;
  for (const auto& p : paths) out.push_back(reports::read_report(p));
  return out;
}

// The run arguments: `run` first, no output of its own; whether they set --repetitions.
bool check_ab_run_args(const std::vector<std::string>& run_args) {
  if (run_args.empty() || run_args[0] != "run")
    throw Error("compare --ab needs the sweep to run: `-- run ARGS...` after the options",
                "hybridbench compare --ab OLD_BIN NEW_BIN -- run --seq-len 4k");
  bool repetitions = false;
  for (size_t i = 1; i < run_args.size(); ++i) {
    const std::string name = option_name(run_args[i]);
    if (name == "--out" || name == "--json" || name == "--resume" || name == "--distribute")
      throw Error(
          "compare --ab runs the sweep itself and writes each pass's report into "
          "--ab-dir: the run arguments may not give " +
              name,
          "leave " + name + " out; the pooled reports are --ab-dir's old.json and new.json");
    repetitions = repetitions || name == "--repetitions";
  }
  return repetitions;
}

}  // namespace

AbResult run_ab(const AbSpec& spec) {
  check_binary("OLD", spec.old_bin);
  check_binary("NEW", spec.new_bin);
  const bool has_repetitions = check_ab_run_args(spec.run_args);
  AbResult r;
  r.dir = prepare_dir(spec.dir);
  AbRunner runner(spec, r.dir, !has_repetitions);
  runner.run_all();
  const std::vector<reports::Report> olds = read_all(runner.paths(false)),
                                     news = read_all(runner.paths(true));
  for (size_t k = 0; k < olds.size() && k < news.size(); ++k)
    r.pairs.emplace_back(olds[k], news[k]);
  r.old_report = pool(olds);
  r.new_report = pool(news);
  r.old_path = (fs::path(r.dir) / "old.json").string();
  r.new_path = (fs::path(r.dir) / "new.json").string();
  reports::write_outputs({{r.old_path, reports::to_json_text(r.old_report)},
                          {r.new_path, reports::to_json_text(r.new_report)}});
  return r;
}

}  // namespace hb::cli
