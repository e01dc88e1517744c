// cli/run_session's exit status and files for each way a sweep can end (the binary's side of
// the same is in run_cli_test.cpp): a point with status error fails the run, oom does not; an
// interrupted sweep keeps its journal and exits with its code.
#include "cli/run_session.h"

#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "core/error.h"
#include "reports/json_io.h"

namespace hb::cli {
namespace {

namespace fs = std::filesystem;

reports::Point point(const std::string& strategy, reports::PointStatus status) {
  reports::Point p;
  p.axes = {"qwen2.5-0.5b", "qwen", 256, 1, strategy, "fp16", "structured", "cpu", 4, 16, {}};
  p.status = status;
  p.provenance = reports::Provenance::emulated;
  if (status == reports::PointStatus::ok) {
    static_cast<reports::Timing&>(p.step) = reports::Timing::from_samples({1000, 1100, 1050});
    p.step.stop_reason = reports::StopReason::max_steps;
  } else {
    p.reason = status == reports::PointStatus::oom ? "needs 3 MiB of accelerator capacity"
                                                   : "broken on purpose";
  }
  return p;
}

class Session : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string t = (fs::temp_directory_path() / "hb-session-XXXXXX").string();
    dir_ = ::mkdtemp(t.data());
    out_ = (fs::path(dir_) / "r.json").string();
  }
  void TearDown() override { fs::remove_all(dir_); }
  // One unit journaled, then `report` handed to finish().
  int end_with(reports::Report report) {
    SweepSession s(
        out_, sweep_identity(bench::SweepSpec{}.validate(), {}, "hybridbench run --test"), false);
    EXPECT_TRUE(fs::exists(bench::journal_path(out_)));
    s.control()->on_unit_done({"pass=0;unit", report.points});
    return s.finish(report, {});
  }
  std::string dir_, out_;
};

TEST_F(Session, ErrorPointFailsTheRunOomDoesNot) {
  reports::Report r;
  r.points = {point("cpu-only", reports::PointStatus::ok),
              point("h2o", reports::PointStatus::error)};
  EXPECT_EQ(end_with(r), kExitFailure);
  EXPECT_EQ(reports::read_report(out_).points.size(), 2u);  // the report is written all the same
  EXPECT_FALSE(fs::exists(bench::journal_path(out_)));      // and complete: no journal
  r.points = {point("cpu-only", reports::PointStatus::ok),
              point("full-gpu", reports::PointStatus::oom),
              point("quest", reports::PointStatus::unsupported)};
  EXPECT_EQ(end_with(r), kExitOk);
}

TEST_F(Session, InterruptedSweepKeepsItsJournalAndExitsWithItsCode) {
  reports::Report r;
  r.points = {point("cpu-only", reports::PointStatus::ok)};
  r.interruption = {true, "trace.safetensors: too short (after 1 of 4 points)", kExitUsage};
  EXPECT_EQ(end_with(r), kExitUsage);
  EXPECT_TRUE(reports::read_report(out_).interruption.interrupted);
  EXPECT_TRUE(fs::exists(bench::journal_path(out_)));
  // Nothing finished: no report is written, and no empty journal is left behind.
  fs::remove_all(dir_);
  fs::create_directory(dir_);
  {
    SweepSession s(
        out_, sweep_identity(bench::SweepSpec{}.validate(), {}, "hybridbench run --test"), false);
    reports::Report none;
    none.interruption = {true, "internal error: x (after 0 of 4 points)", kExitFailure};
    EXPECT_EQ(s.finish(none, {}), kExitFailure);
  }
  EXPECT_FALSE(fs::exists(out_));
  EXPECT_FALSE(fs::exists(bench::journal_path(out_)));
}

bench::SweepIdentity test_identity() {
  return sweep_identity(bench::SweepSpec{}.validate(), {}, "hybridbench run --test");
}

// A --repetitions pass process journals through its own descriptor: whether the journal may go
// is read from the file, so a run that ends without a report (its first pass's process killed)
// keeps the points for --resume.
TEST_F(Session, PointsAnotherProcessJournaledAreKept) {
  {
    SweepSession s(out_, test_identity(), false);
    bench::Journal::reopen(bench::journal_path(out_))
        .append({"pass=0;unit", {point("cpu-only", reports::PointStatus::ok)}});
    const Error e = s.with_resume_hint(Error("pass 1/3's process ended by signal 9", "x", 1));
    EXPECT_NE(e.problem().find("the 1 finished points are in"), std::string::npos) << e.problem();
    EXPECT_NE(e.problem().find("--resume " + out_), std::string::npos) << e.problem();
  }
  EXPECT_EQ(bench::journal_points(bench::journal_path(out_)), 1);
}

// The complete report is on disk before the journal goes, and the journal goes before anything
// is printed: a closed pipe killing the summary must not leave it beside a complete report.
TEST_F(Session, TheJournalIsGoneBeforeTheSummaryPrints) {
  SweepSession s(out_, test_identity(), false);
  reports::Report r;
  r.points = {point("cpu-only", reports::PointStatus::ok)};
  s.control()->on_unit_done({"pass=0;unit", r.points});
  bool printed = false;
  EXPECT_EQ(s.finish(r,
                     [&](const reports::Report&) {
                       printed = true;
                       EXPECT_TRUE(fs::exists(out_));
                       EXPECT_FALSE(fs::exists(bench::journal_path(out_)));
                     }),
            kExitOk);
  EXPECT_TRUE(printed);
}

// One run per --out: a second session on it is refused naming the holder; the lock file goes
// with the first.
TEST_F(Session, ASecondRunOnTheSameOutIsRefused) {
  {
    SweepSession first(out_, test_identity(), false);
    ASSERT_TRUE(fs::exists(OutLock::path_for(out_)));
    try {
      SweepSession second(out_, test_identity(), false);
      ADD_FAILURE() << "two runs on one --out";
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), kExitUsage);
      EXPECT_NE(e.problem().find("pid " + std::to_string(::getpid())), std::string::npos)
          << e.problem();
    }
    EXPECT_THROW(SweepSession(out_, test_identity(), true), Error);  // nor a --resume of it
  }
  EXPECT_FALSE(fs::exists(OutLock::path_for(out_)));
  EXPECT_FALSE(fs::exists(bench::journal_path(out_)));
  EXPECT_NO_THROW(SweepSession(out_, test_identity(), false));
}

// A legal name whose journal name would pass the file-name limit: refused up front, exit 2.
TEST_F(Session, AnOutNameWithoutRoomForItsJournalIsRefused) {
  const std::string longest = (fs::path(dir_) / (std::string(241 - 5, 'r') + ".json")).string();
  EXPECT_NO_THROW(SweepSession(longest, test_identity(), false));
  const std::string too_long = (fs::path(dir_) / (std::string(242 - 5, 'r') + ".json")).string();
  try {
    SweepSession s(too_long, test_identity(), false);
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage);
    EXPECT_NE(e.problem().find("limit of 255"), std::string::npos) << e.problem();
    EXPECT_NE(e.fix().find("at most 241 characters"), std::string::npos) << e.fix();
  }
  EXPECT_TRUE(fs::is_empty(dir_));
}

TEST_F(Session, NoJournalForStandardOutputAndNoResumeFromIt) {
  EXPECT_NO_THROW(SweepSession("-", sweep_identity(bench::SweepSpec{}.validate(), {}, ""), false));
  EXPECT_FALSE(fs::exists("-.partial.jsonl"));
  EXPECT_THROW(
      SweepSession("/dev/null", sweep_identity(bench::SweepSpec{}.validate(), {}, ""), true),
      Error);
}

}  // namespace
}  // namespace hb::cli
