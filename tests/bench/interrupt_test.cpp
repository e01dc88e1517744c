// Stopping, failing and resuming a sweep through the runner API (SweepControl) and the journal
// (bench/journal.h); failed points without accuracy figures; accelerators refused up front.
// The binary's side (signals, --resume, exit codes) is in run_cli_test.cpp.
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <csignal>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <system_error>

#include <gtest/gtest.h>

#include "baselines/register.h"
#include "core/error.h"
#include "hybrid/register.h"
#include "kernels/backend.h"
#include "reports/json_io.h"
#include "bench/journal.h"
#include "bench/runner.h"
#include "tests/bench/tiny_spec.h"

namespace hb::bench {
namespace {

namespace fs = std::filesystem;

// "broken": cpu-only, except at prompt lengths >= broken.at, where it fails the way real
// strategies have: mode 1 = an hb::Error in a decode step (the point is "error"), mode 2 = an
// exception escaping the point (std::system_error, as thread creation throws). broken.after
// = N: only plans after the Nth (counted per process) fail, so a later --repetitions pass can.
std::atomic<int> g_plans{0};
class Broken final : public Strategy {
 public:
  explicit Broken(const StrategyOptions& o)
      : inner_(StrategyRegistry::instance().find("cpu-only").make(StrategyOptions{})),
        mode_(static_cast<int>(o.number("broken", "mode", 1))),
        at_(static_cast<int64_t>(o.number("broken", "at", 0))),
        after_(static_cast<int>(o.number("broken", "after", 0))) {}
  std::string name() const override { return "broken"; }
  PlanResult plan(const Problem& p, const Platform& platform) override {
    fails_ = p.prompt_len() >= at_ && ++g_plans > after_;
    if (fails_ && mode_ == 2)
      throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again),
                              "planned failure");
    return inner_->plan(p, platform);
  }
  void load() override { inner_->load(); }
  void prepare_step(int s) override { inner_->prepare_step(s); }
  void step(int s, StepResult& out) override {
    if (fails_ && s == 3) throw Error("broken on purpose at step 3");
    inner_->step(s, out);
  }
  void fill_attended(int s, StepResult& out) override { inner_->fill_attended(s, out); }

 private:
  std::unique_ptr<Strategy> inner_;
  int mode_;
  int64_t at_;
  int after_;
  bool fails_ = false;
};

SweepSpec tiny_spec() {
  StrategyRegistry::instance().add(
      {"broken", "fails on purpose (tests)", "test",
       [](const StrategyOptions& o) { return std::make_unique<Broken>(o); }});
  g_plans = 0;
  return testing::tiny_spec({100, 200, 300});
}

// A control that records what the runner reports done.
struct Recorder {
  std::shared_ptr<SweepControl> control = std::make_shared<SweepControl>();
  std::vector<FinishedUnit> units;
  Recorder() {
    control->on_unit_done = [this](const FinishedUnit& u) { units.push_back(u); };
  }
  RunEnvironment env() const {
    RunEnvironment e;
    e.control = control;
    return e;
  }
};

TEST(Interrupt, StopRequestReturnsTheFinishedUnitsMarkedInterrupted) {
  Recorder rec;
  // Stop once the first unit is done: the flag a signal handler sets, polled between steps.
  rec.control->should_stop = [&] { return !rec.units.empty(); };
  const reports::Report r = run_sweep(tiny_spec(), rec.env());
  EXPECT_TRUE(r.interruption.interrupted);
  EXPECT_NE(r.interruption.reason.find("stopped (after 2 of 6 points)"), std::string::npos)
      << r.interruption.reason;
  ASSERT_EQ(r.points.size(), 2u);
  for (const auto& p : r.points) {
    EXPECT_EQ(p.axes.seq_len, 100);
    EXPECT_EQ(p.status, reports::PointStatus::ok) << p.reason;
  }
  EXPECT_EQ(r.context.accelerator.kind, AcceleratorKind::cpu);
  // The flag survives the file: "interrupted": true and the reason, read back.
  const reports::Report back = reports::from_json_text(reports::to_json_text(r), "mem");
  EXPECT_TRUE(back.interruption.interrupted);
  EXPECT_EQ(back.interruption.reason, r.interruption.reason);
  EXPECT_NE(reports::to_json_text(r).find("\"interrupted\": true"), std::string::npos);
  // A complete report does not have the field at all (files stay as before).
  reports::Report complete = r;
  complete.interruption = {};
  EXPECT_EQ(reports::to_json_text(complete).find("interrupted"), std::string::npos);
}

TEST(Interrupt, FailureEscapingAPointKeepsTheFinishedUnits) {
  SweepSpec spec = tiny_spec();
  spec.strategies = {"cpu-only", "broken"};
  spec.strategy_options = {{"broken.mode", "2"}, {"broken.at", "300"}};
  // Without a control the failure propagates, as before (nothing half-written by callers that
  // did not ask for it).
  EXPECT_THROW(run_sweep(spec, RunEnvironment{}), std::system_error);
  Recorder rec;
  const reports::Report r = run_sweep(spec, rec.env());
  ASSERT_TRUE(r.interruption.interrupted);
  EXPECT_EQ(r.interruption.exit_code, kExitFailure);
  EXPECT_NE(r.interruption.reason.find(
                "internal error: planned failure: Resource temporarily unavailable"),
            std::string::npos)
      << r.interruption.reason;
  ASSERT_EQ(r.points.size(), 4u);  // 100 and 200 tokens, both strategies
  EXPECT_EQ(rec.units.size(), 2u);
  for (const auto& p : r.points) EXPECT_LT(p.axes.seq_len, 300);
}

TEST(Interrupt, FailedPointsCarryNoAccuracyFigures) {
  SweepSpec spec = tiny_spec();
  spec.seq_lens = {100};
  spec.strategies = {"cpu-only", "broken"};
  spec.strategy_options = {{"broken.mode", "1"}};  // fails at step 3, after two scored steps
  const reports::Report r = run_sweep(spec, RunEnvironment{});
  ASSERT_EQ(r.points.size(), 2u);
  const reports::Point& bad = r.points[1];
  ASSERT_EQ(bad.status, reports::PointStatus::error);
  EXPECT_NE(bad.reason.find("broken on purpose"), std::string::npos);
  EXPECT_EQ(bad.accuracy.steps_scored, 0);
  // In the file the figures are null, never 0 / 1 / 1 (which read as a perfect score).
  const reports::Report back = reports::from_json_text(reports::to_json_text(r), "mem");
  EXPECT_TRUE(std::isnan(back.points[1].accuracy.rel_l2));
  EXPECT_TRUE(std::isnan(back.points[1].accuracy.cosine));
  EXPECT_TRUE(std::isnan(back.points[1].accuracy.mass_recall));
  EXPECT_FALSE(std::isnan(back.points[0].accuracy.rel_l2));
  // A later --repetitions pass that fails does not keep the first pass's figures either.
  spec.strategy_options = {{"broken.mode", "1"}, {"broken.after", "1"}};
  spec.repetitions = 2;
  g_plans = 0;
  const reports::Report pooled = run_sweep(spec, RunEnvironment{});
  ASSERT_EQ(pooled.points.size(), 2u);
  EXPECT_EQ(pooled.points[1].status, reports::PointStatus::error);
  EXPECT_NE(pooled.points[1].reason.find("later --repetitions pass"), std::string::npos);
  EXPECT_EQ(pooled.points[1].accuracy.steps_scored, 0);
}

TEST(Interrupt, UnusableAcceleratorIsRefusedBeforeTheSweep) {
  // An unknown kind cannot reach the runner any more (AcceleratorKind is an enum; `--accelerator
  // tpu` is refused by the option's parser: RunCli.UnknownAcceleratorIsAUsageError).
  SweepSpec spec = tiny_spec();
  if (cuda_available()) GTEST_SKIP() << "a GPU is usable here: cuda is not refused";
  spec.accelerator.kind = AcceleratorKind::cuda;
  try {
    run_sweep(spec, RunEnvironment{});
    ADD_FAILURE() << "cuda without a GPU ran";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage);
    EXPECT_NE(e.problem().find("no GPU is usable"), std::string::npos) << e.problem();
  }
}

TEST(Interrupt, BadStrategyOptionIsRefusedBeforeTheSweep) {
  SweepSpec spec = tiny_spec();
  spec.strategies = {"h2o"};
  spec.strategy_options = {{"h2o.heavy_ratio", "-1"}};
  try {
    run_sweep(spec, RunEnvironment{});
    ADD_FAILURE() << "h2o.heavy_ratio=-1 ran";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage);
    EXPECT_NE(e.problem().find("h2o.heavy_ratio"), std::string::npos) << e.problem();
  }
}

class JournalFile : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string t = (fs::temp_directory_path() / "hb-journal-XXXXXX").string();
    dir_ = ::mkdtemp(t.data());
    path_ = journal_path((fs::path(dir_) / "r.json").string());
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_, path_;
};

SweepIdentity identity(const SweepSpec& spec) {
  return SweepIdentity{"0.1.0 test Release", "hybridbench run --test", spec.validate().echo()};
}

TEST_F(JournalFile, ResumedSweepReportsJournaledPointsUnchangedAndRunsTheRest) {
  const SweepSpec spec = tiny_spec();
  EXPECT_EQ(path_, (fs::path(dir_) / "r.json.partial.jsonl").string());
  reports::Report first;
  {
    Journal j = Journal::create(path_, identity(spec));
    Recorder rec;
    rec.control->on_unit_done = [&](const FinishedUnit& u) {
      j.append(u);
      rec.units.push_back(u);
    };
    rec.control->should_stop = [&] { return rec.units.size() == 2; };
    first = run_sweep(spec, rec.env());
  }
  ASSERT_TRUE(first.interruption.interrupted);
  ASSERT_EQ(first.points.size(), 4u);
  // A new sweep must not overwrite the interrupted one's journal.
  EXPECT_THROW(Journal::create(path_, identity(spec)), Error);

  JournalContents c = read_journal(path_);
  EXPECT_EQ(c.points, 4);
  EXPECT_EQ(c.units.size(), 2u);
  check_same_sweep(c.identity, identity(spec), path_);  // same options: no throw
  Recorder rec;
  rec.control->finished = c.units;
  const reports::Report full = run_sweep(spec, rec.env());
  EXPECT_FALSE(full.interruption.interrupted);
  ASSERT_EQ(full.points.size(), 6u);
  EXPECT_EQ(rec.units.size(), 1u);  // only the unit that had not finished ran
  for (size_t i = 0; i < first.points.size(); ++i) {
    SCOPED_TRACE(full.points[i].axes.key());
    EXPECT_EQ(full.points[i].axes, first.points[i].axes);
    EXPECT_EQ(full.points[i].step.samples_ns, first.points[i].step.samples_ns);  // bit for bit
    EXPECT_EQ(full.points[i].accuracy.rel_l2, first.points[i].accuracy.rel_l2);
  }
  EXPECT_EQ(full.points[4].axes.seq_len, 300);
  EXPECT_FALSE(full.speedups.empty());
}

TEST_F(JournalFile, CutLastLineIsIgnoredAndARerunUnitReplacesTheEarlierOne) {
  const SweepSpec spec = tiny_spec();
  Recorder rec;
  SweepSpec one = spec;
  one.seq_lens = {100};
  run_sweep(one, rec.env());
  ASSERT_EQ(rec.units.size(), 1u);
  {
    Journal j = Journal::create(path_, identity(spec));
    // A line whose point is not a report point.
    std::ofstream(path_, std::ios::app)
        << "{\"unit\": \"" << rec.units[0].key << "\", \"index\": 0, \"of\": 2, \"point\": 0}\n";
  }
  // That line's point is not a point: the journal is damaged, and says where.
  try {
    read_journal(path_);
    ADD_FAILURE() << "a damaged line was accepted";
  } catch (const Error& e) {
    EXPECT_NE(e.problem().find("line 2"), std::string::npos) << e.problem();
  }
  fs::remove(path_);
  {
    Journal j = Journal::create(path_, identity(spec));
    j.append(rec.units[0]);
  }
  // A kill in the middle of a line: the last line has no newline and is ignored.
  std::ofstream(path_, std::ios::app) << "{\"unit\": \"pass=0;model=qwen";
  JournalContents c = read_journal(path_);
  EXPECT_EQ(c.points, 2);
  // Reopening for --resume cuts it off, so the next append starts a clean line; the unit run
  // again replaces the first attempt.
  {
    Journal j = Journal::reopen(path_);
    j.append(rec.units[0]);
  }
  c = read_journal(path_);
  EXPECT_EQ(c.points, 2);
  ASSERT_EQ(c.units.size(), 1u);
  EXPECT_EQ(c.units.begin()->second[0].step.samples_ns, rec.units[0].points[0].step.samples_ns);
}

TEST_F(JournalFile, AJournalWithoutPointsDoesNotBlockANewRun) {
  const SweepSpec spec = tiny_spec();
  { Journal j = Journal::create(path_, identity(spec)); }  // killed during its first unit
  EXPECT_NO_THROW(Journal::create(path_, identity(spec)));
  EXPECT_EQ(read_journal(path_).points, 0);
}

// A journal whose header never reached the disk (its run died, or the disk filled, before the
// first line was written) holds nothing: a new run replaces it, --resume calls it absent, and a
// header that cannot be written leaves no file behind.
TEST_F(JournalFile, AJournalWithoutItsHeaderIsNoJournal) {
  const SweepSpec spec = tiny_spec();
  for (const std::string text : {"", "{\"journal\": \"hybridbench.jou"}) {
    SCOPED_TRACE("journal text: '" + text + "'");
    std::ofstream(path_, std::ios::binary) << text;
    EXPECT_EQ(journal_points(path_), 0);
    try {
      read_journal(path_);
      ADD_FAILURE() << "a journal without a header was read";
    } catch (const Error& e) {
      EXPECT_NE(e.problem().find("no sweep journal to resume from"), std::string::npos)
          << e.problem();
      EXPECT_EQ(e.problem().find("damaged"), std::string::npos) << e.problem();
    }
    EXPECT_NO_THROW(Journal::create(path_, identity(spec)));
    EXPECT_EQ(read_journal(path_).points, 0);
    fs::remove(path_);
  }
  EXPECT_EQ(journal_points(path_), -1);  // no file
  // A full disk at the header: EFBIG under a file-size limit fails the same write as ENOSPC.
  struct rlimit was {};
  ::getrlimit(RLIMIT_FSIZE, &was);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit none = was;
  none.rlim_cur = 0;
  ::setrlimit(RLIMIT_FSIZE, &none);
  EXPECT_THROW(Journal::create(path_, identity(spec)), Error);
  ::setrlimit(RLIMIT_FSIZE, &was);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_FALSE(fs::exists(path_)) << "a journal without its header was left behind";
}

// A header member of another type (an edited journal; found by fuzz_journal) is a damaged
// journal naming the member, never an escaped json type_error.
TEST_F(JournalFile, AHeaderMemberOfTheWrongTypeIsDamage) {
  for (const std::string member : {"journal", "report_schema", "build", "command_line"}) {
    SCOPED_TRACE(member);
    // A valid header with `member` replaced by a number.
    const std::pair<std::string, std::string> valid[] = {
        {"journal", "\"hybridbench.journal/1\""},
        {"report_schema", "\"" + reports::schema_string() + "\""},
        {"build", "\"b\""},
        {"command_line", "\"c\""}};
    std::string header = "{\"options\": {}";
    for (const auto& [key, value] : valid)
      header += ", \"" + key + "\": " + (key == member ? std::string("5") : value);
    header += "}";
    std::ofstream(path_, std::ios::binary) << header << "\n";
    try {
      read_journal(path_);
      ADD_FAILURE() << "a header with a number for " << member << " was read";
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), kExitUsage);
      EXPECT_NE(e.problem().find("line 1"), std::string::npos) << e.problem();
      EXPECT_NE(e.problem().find(member), std::string::npos) << e.problem();
    }
    fs::remove(path_);
  }
}

TEST_F(JournalFile, DifferentOptionsAreNamed) {
  SweepSpec spec = tiny_spec();
  const SweepIdentity was = identity(spec);
  spec.seq_lens = {100, 200};
  try {
    check_same_sweep(was, identity(spec), path_);
    ADD_FAILURE() << "different options accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage);
    EXPECT_NE(e.problem().find("option seq_lens differs"), std::string::npos) << e.problem();
    EXPECT_NE(e.problem().find("\"100,200,300\""), std::string::npos) << e.problem();
    EXPECT_NE(e.fix().find("hybridbench run --test"), std::string::npos) << e.fix();
  }
  SweepIdentity other_build = was;
  other_build.build = "0.2.0 other Release";
  EXPECT_THROW(check_same_sweep(was, other_build, path_), Error);
  EXPECT_THROW(read_journal(path_ + ".none"), Error);
}

// An option echoed only for some values of another (pass_process, with repetitions above 1) is
// not named for a change to that other option: the user changed --repetitions.
TEST_F(JournalFile, AnOptionBothSweepsHaveIsNamedBeforeOneOnlyOneHas) {
  SweepIdentity was{"b", "hybridbench run", {{"--pass-process", "fresh"}, {"--repetitions", "3"}}};
  SweepIdentity now{"b", "hybridbench run --repetitions 1", {{"--repetitions", "1"}}};
  try {
    check_same_sweep(was, now, path_);
    ADD_FAILURE() << "different options accepted";
  } catch (const Error& e) {
    EXPECT_NE(e.problem().find("option --repetitions differs"), std::string::npos) << e.problem();
  }
  now.options["--repetitions"] = "3";
  EXPECT_THROW(check_same_sweep(was, now, path_), Error);  // one-sided differences still count
}

}  // namespace
}  // namespace hb::bench
