#include "cli/run_session.h"

#include <sys/resource.h>
#include <sys/stat.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <set>
#include <system_error>

#include "core/build_info.h"
#include "core/error.h"
#include "reports/json_io.h"
#include "reports/output_file.h"
#include "bench/trace.h"

namespace hb::cli {

namespace {

// The journal lives next to a report file; a device, FIFO or standard output has no "next to".
bool journal_possible(const std::string& out) {
  if (out.empty() || out == "-") return false;
  struct stat st {};
  if (::stat(out.c_str(), &st) != 0) return errno == ENOENT;
  return S_ISREG(st.st_mode);
}

int64_t env_count(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return 0;
  char* end = nullptr;
  const long long n = std::strtoll(v, &end, 10);
  if (*end != '\0' || n < 0)
    throw Error(std::string(name) + "='" + v + "' is not a point count",
                "unset it, or set a number of points");
  return n;
}

}  // namespace

bench::SweepIdentity sweep_identity(const bench::ResolvedSweep& sweep,
                                    const std::map<std::string, std::string>& extra,
                                    const std::string& command_line) {
  bench::SweepIdentity id;
  const auto& b = build_info();
  id.build = b.version + " " + b.git_commit + " " + b.build_type;
  id.command_line = command_line;
  // Keyed by the flag a user would change, so a mismatch names it ("option --seq-len differs").
  static const std::map<std::string, std::string> flag = {
      {"models", "--model"},
      {"kv_dtypes", "--kv-dtype"},
      {"seq_lens", "--seq-len"},
      {"batches", "--batch"},
      {"kv_budget", "--kv-budget"},
      {"strategies", "--strategy"},
      {"decode_steps", "--decode-steps"},
      {"page_tokens", "--page-tokens"},
      {"workload", "--workload"},
      {"seed", "--seed"},
      {"accuracy_steps", "--accuracy-steps"},
      {"repetitions", "--repetitions"},
      {"pass_process", "--pass-process"},
      {"rounds", "--rounds"},
      {"warmup_steps", "--warmup"},
      {"min_samples", "--min-samples"},
      {"max_samples", "--max-samples"},
      {"max_noise_fraction", "--max-noise"},
      {"min_time_s", "--min-time"},
      {"timeout_s", "--timeout"},
      {"accelerator", "--accelerator"},
      {"accelerator_capacity_bytes", "--accelerator-memory"},
      {"kv_node", "--kv-node"},
      {"emulate_cxl", "--emulate-cxl"},
      {"kv_pages", "--kv-pages"}};
  const bench::SweepSpec& spec = sweep.spec;
  for (const auto& [k, v] : sweep.echo()) {
    // How tables read the points, not what they measure: --resume may change them.
    if (k == "accuracy_target" || k == "tie_margin_fraction") continue;
    auto f = flag.find(k);
    id.options[f != flag.end()           ? f->second
               : k.rfind("opt.", 0) == 0 ? "--opt " + k.substr(4)
                                         : k] = v;
  }
  // A trace by content, not path: a trace file changed since the interrupted run is another sweep.
  id.options["--workload"] = sweep.workload_label();
  id.options["--accelerator-threads"] = std::to_string(spec.accelerator.cpu_threads);
  id.options["--device"] = std::to_string(spec.accelerator.device);
  id.options["--host-threads"] = std::to_string(spec.host_threads);
  for (const auto& [k, v] : extra) id.options[k] = v;
  return id;
}

void check_journal_name_room(const std::string& option, const std::string& out) {
  if (!journal_possible(out)) return;
  // Longer than the lock's (OUT.lock) and the report's temporary file's (.OUT.XXXXXX.tmp).
  const std::string journal = bench::journal_path(out);
  reports::check_name_room(
      option, out, journal.size() - out.size(),
      "the run's journal beside it (" + std::filesystem::path(journal).filename().string() + ")");
}

SweepSession::SweepSession(const std::string& out, const bench::SweepIdentity& identity,
                           bool resume)
    : out_(out),
      guard_(journal_possible(out) ? bench::journal_path(out) : std::string()),
      control_(std::make_shared<bench::SweepControl>()) {
  fail_after_ = env_count("HB_TEST_FAIL_AFTER_POINTS");
  crash_after_ = env_count("HB_TEST_CRASH_AFTER_POINTS");
  if (journal_possible(out)) {
    const std::string path = bench::journal_path(out);
    check_journal_name_room("--out", out);
    lock_.emplace(out);  // before the journal is judged: no other run may be writing it
    if (resume) {
      bench::JournalContents c = bench::read_journal(path);
      bench::check_same_sweep(c.identity, identity, path);
      resumed_points_ = c.points;
      std::set<std::string> keys;
      for (const auto& [unit, points] : c.units)
        for (const auto& p : points) keys.insert(p.axes.key());
      resumed_distinct_ = static_cast<int64_t>(keys.size());
      control_->finished = std::move(c.units);
      journal_.emplace(bench::Journal::reopen(path));
    } else {
      journal_.emplace(bench::Journal::create(path, identity));
    }
  } else if (resume) {
    throw Error("--resume " + out + ": not a report file path, so it has no journal to resume from",
                "pass the --out FILE.json of the interrupted run");
  }
  control_->should_stop = [this] { return guard_.requested(); };
  control_->on_unit_done = [this](const bench::FinishedUnit& unit) {
    if (journal_) journal_->append(unit);
  };
}

SweepSession::~SweepSession() {
  // A pass process journals through its own copy of the descriptor, so the file, not this
  // process's count, says whether points would be lost.
  if (journal_ && bench::journal_points(journal_->path()) == 0) journal_->remove();
}

void SweepSession::check_injected_failure(int64_t points_done) const {
  if (crash_after_ > 0 && points_done >= crash_after_) {
    // As a strategy's bug would crash it: SIGSEGV's default action, without a core file.
    const struct rlimit no_core { 0, 0 };
    ::setrlimit(RLIMIT_CORE, &no_core);
    std::signal(SIGSEGV, SIG_DFL);
    std::raise(SIGSEGV);
  }
  if (fail_after_ > 0 && points_done >= fail_after_)
    throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again),
                            "HB_TEST_FAIL_AFTER_POINTS=" + std::to_string(fail_after_));
}

std::string SweepSession::resume_note() const {
  if (!journal_) return "";
  const int64_t points = bench::journal_points(journal_->path());
  if (points <= 0) return "";
  return "; the " + std::to_string(points) + " finished points are in " + journal_->path() +
         ": continue the sweep with the same options and --resume " + out_;
}

Error SweepSession::with_resume_hint(const Error& e) const {
  const std::string note = resume_note();
  if (note.empty()) return e;
  return Error(e.problem() + note, e.fix(), e.exit_code());
}

std::string SweepSession::resumed_text() const {
  if (resumed_points_ == 0) return "";
  return ", " + std::to_string(resumed_distinct_) + " of them resumed from the journal" +
         (resumed_points_ != resumed_distinct_
              ? ": " + std::to_string(resumed_points_) + " point passes"
              : "");
}

int SweepSession::finish(reports::Report& report,
                         const std::function<void(const reports::Report&)>& summary) {
  auto& in = report.interruption;
  if (in.interrupted && guard_.requested()) {
    in.reason = guard_.signal_text() + ": " + in.reason;
    in.exit_code = guard_.exit_code();
  }
  const std::string journal = journal_ ? journal_->path() : "";
  if (in.interrupted && report.points.empty()) {
    // Nothing finished here: no report (the destructor removes a journal without points).
    std::cerr << "hybridbench: " << (guard_.requested() ? "interrupted" : "error") << ": "
              << in.reason << "; no point finished, nothing written" << resume_note() << "\n";
    return in.exit_code;
  }
  try {
    reports::write_report(out_, report);
  } catch (const Error& e) {
    throw with_resume_hint(e);  // a full disk: the journal keeps every point
  }
  // The complete report holds every point now. Removed before anything is printed: a closed
  // pipe or terminal must not leave a stale journal that refuses the next run.
  if (!in.interrupted && journal_) journal_->remove();
  if (summary) summary(report);
  const std::string written =
      reports::is_stdout_path(out_) ? "the report to standard output" : out_;
  if (in.interrupted) {
    std::cerr << "hybridbench: " << (guard_.requested() ? "interrupted" : "error") << ": "
              << in.reason << "\n"
              << "  wrote " << written << " with the " << report.points.size()
              << " finished points (marked \"interrupted\")";
    if (journal_)
      std::cerr << "; continue the sweep with the same options and --resume " << out_
                << " (journal " << journal << ")";
    std::cerr << "\n";
    return in.exit_code != 0 ? in.exit_code : kExitFailure;
  }
  std::cerr << "hybridbench: wrote " << written << " (" << report.points.size() << " points"
            << resumed_text() << ")\n";
  // A point that failed (status error) makes the run fail: CI must not pass a sweep whose
  // strategies broke. oom and unsupported are findings of the sweep, not failures.
  int failed = 0;
  const reports::Point* first = nullptr;
  for (const auto& p : report.points)
    if (p.status == reports::PointStatus::error && failed++ == 0) first = &p;
  if (failed > 0) {
    std::cerr << "hybridbench: error: " << failed << " of " << report.points.size()
              << " points failed; first: " << first->axes.strategy << " at " << first->axes.seq_len
              << " tokens: " << first->reason << "\n"
              << "  fix: see each point's reason in " << written << " (status \"error\")\n";
    return kExitFailure;
  }
  if (guard_.requested()) return guard_.exit_code();  // the signal came after the last point
  return kExitOk;
}

}  // namespace hb::cli
