// `hybridbench run --workload trace:FILE` end to end through the built binary: a trace the sweep
// cannot use exits 2 with the problem and the fix (never a crash), and two spellings of one
// file's path give reports whose points match.
#include <filesystem>

#include <gtest/gtest.h>

#include "reports/json_io.h"
#include "tests/cli_fixture.h"
#include "trace_files.h"

namespace hb::bench {
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

// Issue 17: a trace of 8 q-heads / 2 kv-heads x 64 (no preset has that shape) runs on its own
// shape when no --model is given, labelled trace:NAME; without prompt_q, h2o and infinigen say
// what stood in for the prompt queries and the report warns for their points only.
TEST_F(TraceCli, TraceWithoutModelRunsItsOwnShape) {
  TraceTensors(48, 6, 0, 7, 8, 2, 64).write(file("gqa.safetensors"));
  const std::string common =
      "run --workload trace:" + file("gqa.safetensors") +
      " --accelerator cpu --accelerator-threads 1 --host-threads 1 --warmup 1 --min-samples 2"
      " --accuracy-steps 1 --decode-steps 4 --strategy cpu-only,h2o,infinigen ";
  ASSERT_EQ(run(common + "--out " + file("r.json")), 0) << out_;  // no -q: the note is on stderr
  EXPECT_TRUE(contains(out_, "8q/2kv x64 fp16") && contains(out_, "trace:gqa") &&
              contains(out_, "--scope attention"))
      << out_;
  const auto r = reports::read_report(file("r.json"));
  ASSERT_EQ(r.points.size(), 3u);
  for (const auto& p : r.points) {
    EXPECT_EQ(p.status, reports::PointStatus::ok) << p.axes.strategy << ": " << p.reason;
    EXPECT_EQ(p.axes.model, "trace:gqa");
    EXPECT_EQ(p.axes.family, "trace");
    EXPECT_EQ(p.axes.kv_dtype, "fp16");  // the trace's F16
    EXPECT_EQ(p.axes.seq_len, 42);       // the trace's own prompt: 48 tokens - 6 steps
    EXPECT_EQ(p.axes.extra.count("scope"), 0u) << "attention scope";
    const bool seeds = p.axes.strategy != "cpu-only";
    EXPECT_EQ(p.warnings.size(), seeds ? 1u : 0u) << p.axes.strategy;
  }
  EXPECT_EQ(r.points[1].strategy_params.at("prefill_scores").rfind("none", 0), 0u);
  EXPECT_TRUE(contains(r.points[2].strategy_params.at("skew"), "prompt keys"));
  EXPECT_TRUE(contains(out_, "point warning(s)") && contains(out_, "h2o, seq_len 42"))
      << "run's stderr: " << out_;
  ASSERT_EQ(run("report " + file("r.json")), 0) << out_;
  EXPECT_TRUE(contains(stdout_, "Warning: 2 point warning(s)") &&
              contains(stdout_, "infinigen, seq_len 42"))
      << stdout_;

  // With prompt_q, nobody warns and h2o seeds from the prompt queries.
  TraceTensors(48, 6, 8, 7, 8, 2, 64).write(file("gqa-pq.safetensors"));
  ASSERT_EQ(run("run --workload trace:" + file("gqa-pq.safetensors") +
                " --accelerator cpu --accelerator-threads 1 --host-threads 1 --warmup 1"
                " --min-samples 2 --accuracy-steps 1 --decode-steps 4 --strategy h2o -q --out " +
                file("pq.json")),
            0)
      << out_;
  const auto pq = reports::read_report(file("pq.json"));
  ASSERT_EQ(pq.points.size(), 1u);
  EXPECT_TRUE(pq.points[0].warnings.empty());
  EXPECT_EQ(pq.points[0].strategy_params.at("prefill_scores").rfind("softmax", 0), 0u);
  EXPECT_FALSE(contains(out_, "warning(s)")) << out_;
}

// A --model of another shape is still refused, naming both shapes; layer scope asked for
// explicitly on a trace's own model (no layer dimensions) is refused with the fix.
TEST_F(TraceCli, TraceShapeDisagreementsExitTwo) {
  TraceTensors(48, 6, 0, 7, 8, 2, 64).write(file("gqa.safetensors"));
  const std::string common = "run --workload trace:" + file("gqa.safetensors") +
                             " --accelerator cpu --strategy cpu-only --decode-steps 4 --out " +
                             file("r.json") + " ";
  EXPECT_EQ(run(common + "--model llama-3.1-8b"), 2) << out_;
  EXPECT_TRUE(contains(out_, "8q/2kv x64") && contains(out_, "32q/8kv x128")) << out_;
  EXPECT_EQ(run(common + "--scope layer"), 2) << out_;
  EXPECT_TRUE(contains(out_, "no layer dimensions") && contains(out_, "--scope attention")) << out_;
  EXPECT_FALSE(std::filesystem::exists(file("r.json")));
}

}  // namespace
}  // namespace hb::bench
