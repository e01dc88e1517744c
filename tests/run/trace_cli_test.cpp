// `hybridbench run --workload trace:FILE` end to end through the built binary: a trace the sweep
// cannot use exits 2 with the problem and the fix (never a crash), and two spellings of one
// file's path give reports whose points match.
#include <filesystem>

#include <gtest/gtest.h>

#include "reports/json_io.h"
#include "tests/cli_fixture.h"
#include "trace_files.h"

namespace hb::run {
namespace {

using testing::TraceTensors;

class TraceCli : public hb::cli_test::CliTest {
 protected:
  // A cheap run over trace `path` (qwen2.5-0.5b's shape, cpu accelerator, one thread each).
  int run_trace(const std::string& path, const std::string& extra) {
    return run(
        "run --model qwen2.5-0.5b --workload trace:" + path +
        " --accelerator cpu --accelerator-threads 1 --host-threads 1 --warmup 1 --min-samples 2"
        " --accuracy-steps 1 -q " +
        extra);
  }
};

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// Defect 1: 4 steps of q under the default 24 --decode-steps crashed every strategy (exit 139).
TEST_F(TraceCli, ShortTraceExitsTwoNamingTheFix) {
  TraceTensors(40, 4).write(file("T.safetensors"));
  EXPECT_EQ(run_trace(file("T.safetensors"), "--strategy all --out " + file("r.json")), 2) << out_;
  EXPECT_TRUE(contains(out_, "4 decode steps") && contains(out_, "--decode-steps 4")) << out_;
  EXPECT_FALSE(std::filesystem::exists(file("r.json")));
  EXPECT_EQ(run_trace(file("T.safetensors"),
                      "--strategy cpu-only,h2o --decode-steps 4 --out " + file("r.json")),
            0)
      << out_;
}

// Defect 8: NaN in a tensor is exit 2 naming the tensor and the index, before any point runs.
TEST_F(TraceCli, NanExitsTwoNamingTensorAndIndex) {
  TraceTensors t(40, 6);
  t.v.values[130] = std::nanf("");
  t.write(file("nan.safetensors"));
  EXPECT_EQ(run_trace(file("nan.safetensors"),
                      "--strategy cpu-only --decode-steps 4 --out " + file("r.json")),
            2)
      << out_;
  EXPECT_TRUE(contains(out_, "tensor 'v'") && contains(out_, "NaN") &&
              contains(out_, "flat index 130"))
      << out_;
}

// Defect 6: `trace:./T.safetensors` and an absolute path record the same workload axis.
TEST_F(TraceCli, TwoSpellingsOfThePathGiveTheSamePoints) {
  TraceTensors(40, 6).write(file("T.safetensors"));
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir_);
  const int rc_rel =
      run_trace("./T.safetensors", "--strategy cpu-only --decode-steps 4 --out " + file("a.json"));
  std::filesystem::current_path(cwd);
  ASSERT_EQ(rc_rel, 0) << out_;
  ASSERT_EQ(run_trace(file("T.safetensors"),
                      "--strategy cpu-only --decode-steps 4 --out " + file("b.json")),
            0)
      << out_;
  const auto a = reports::read_report(file("a.json")), b = reports::read_report(file("b.json"));
  ASSERT_EQ(a.points.size(), 1u);
  ASSERT_EQ(b.points.size(), 1u);
  EXPECT_EQ(a.points[0].axes.key(), b.points[0].axes.key());
  EXPECT_EQ(a.points[0].axes.workload.rfind("trace:T.safetensors@", 0), 0u)
      << a.points[0].axes.workload;
}

}  // namespace
}  // namespace hb::run
