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

TEST_F(Session, NoJournalForStandardOutputAndNoResumeFromIt) {
  EXPECT_NO_THROW(SweepSession("-", sweep_identity(bench::SweepSpec{}.validate(), {}, ""), false));
  EXPECT_FALSE(fs::exists("-.partial.jsonl"));
  EXPECT_THROW(
      SweepSession("/dev/null", sweep_identity(bench::SweepSpec{}.validate(), {}, ""), true),
      Error);
}

}  // namespace
}  // namespace hb::cli
