// `--workload trace:FILE` through the reader and the runner: what a trace cannot serve is
// refused up front (exit 2, naming the tensor and the fix), never read past, and the points'
// identity does not depend on how the path was spelled.
#include "bench/trace.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <limits>

#include <gtest/gtest.h>

#include "baselines/register.h"
#include "core/error.h"
#include "core/model_presets.h"
#include "core/rng.h"
#include "core/step_io.h"
#include "hybrid/register.h"
#include "kernels/backend.h"
#include "bench/runner.h"
#include "trace_files.h"

namespace hb::bench {
namespace {

namespace fs = std::filesystem;

// adopt_trace_model on the trace `s` names, as `run` does with the trace it opened.
std::string adopt(SweepSpec& s, bool model_given, bool kv_dtype_given, bool scope_given) {
  const TraceFile trace(*trace_path(s.workload));
  return adopt_trace_model(s, &trace, model_given, kv_dtype_given, scope_given);
}
using testing::TraceTensors;

class Trace : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string t = (fs::temp_directory_path() / "hb-trace-XXXXXX").string();
    dir_ = ::mkdtemp(t.data());
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string file(const std::string& name) const { return (fs::path(dir_) / name).string(); }

  // A sweep over a trace with qwen2.5-0.5b's shape: one cheap strategy, cpu accelerator.
  static SweepSpec spec_for(const std::string& path, int decode_steps,
                            std::vector<int64_t> seq_lens = {16}) {
    register_baselines(StrategyRegistry::instance());
    register_hybrid(StrategyRegistry::instance());
    SweepSpec s;
    s.models = {"qwen2.5-0.5b"};
    s.seq_lens = std::move(seq_lens);
    s.strategies = {"cpu-only"};
    s.workload = "trace:" + path;
    s.decode_steps = decode_steps;
    s.stop.warmup_steps = 1;
    s.stop.min_samples = 2;
    s.accuracy_steps = 1;
    s.accelerator.kind = AcceleratorKind::cpu;
    s.accelerator.cpu_threads = 1;
    s.host_threads = 1;
    return s;
  }
  static AttentionShape shape() { return find_model_preset("qwen2.5-0.5b").shape; }

  // The hb::Error run_sweep throws for spec, or a test failure when it does not throw.
  static Error sweep_error(const SweepSpec& spec) {
    try {
      run_sweep(spec, RunEnvironment{});
    } catch (const Error& e) {
      return e;
    }
    ADD_FAILURE() << "run_sweep accepted " << spec.workload;
    return Error("");
  }
  std::string dir_;
};

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// Defect 1: 6 steps of q and 24 --decode-steps used to read past the tensor (exit 139 for
// every strategy); now the sweep is refused before any point runs, naming the fix.
TEST_F(Trace, MoreDecodeStepsThanTheTraceHasAreRefusedUpFront) {
  TraceTensors(40, 6).write(file("short.safetensors"));
  auto spec = spec_for(file("short.safetensors"), 24);
  spec.strategies = {"all"};
  const Error e = sweep_error(spec);
  EXPECT_EQ(e.exit_code(), kExitUsage);
  EXPECT_TRUE(contains(e.problem(), "6 decode steps")) << e.what();
  EXPECT_TRUE(contains(e.fix(), "--decode-steps 6")) << e.what();
  // As many steps as the trace has run, and the report says so in every point's axes.
  const auto report = run_sweep(spec_for(file("short.safetensors"), 6), RunEnvironment{});
  ASSERT_EQ(report.points.size(), 1u);
  EXPECT_EQ(report.points[0].status, reports::PointStatus::ok) << report.points[0].reason;
  EXPECT_EQ(report.points[0].axes.decode_steps, 6);
}

// No path reads past a workload's steps: StepIO (what every strategy stages through) and the
// checked Workload::step give an hb::Error.
TEST_F(Trace, StagingAStepPastTheWorkloadIsAnErrorNotARead) {
  TraceTensors(40, 6).write(file("t.safetensors"));
  const std::vector<Workload> ws = {load_trace_workload(file("t.safetensors"), shape(), 16, 4)};
  Problem problem;
  problem.shape = shape();
  problem.workloads = ws;
  AcceleratorOptions ao;
  ao.kind = AcceleratorKind::cpu;
  ao.cpu_threads = 1;
  auto accel = make_accelerator(ao);
  StepIO io(problem, *accel);
  EXPECT_NO_THROW(io.stage(3));
  EXPECT_THROW(io.stage(4), Error);
  EXPECT_THROW(io.stage(-1), Error);
  EXPECT_THROW(ws[0].step(4), Error);
}

// Defect 8: NaN or Inf in any of the four tensors is refused at load, naming the tensor, the
// flat index and the index per dimension.
TEST_F(Trace, NonFiniteValuesAreRefusedNamingTensorAndIndex) {
  const float kBad[] = {std::numeric_limits<float>::quiet_NaN(),
                        std::numeric_limits<float>::infinity()};
  for (const char* name : {"k", "v", "q", "prompt_q"}) {
    for (float bad : kBad) {
      SCOPED_TRACE(std::string(name) + (std::isnan(bad) ? " NaN" : " Inf"));
      TraceTensors t(40, 6, 8);
      testing::TensorData& target = std::string(name) == "k"   ? t.k
                                    : std::string(name) == "v" ? t.v
                                    : std::string(name) == "q" ? t.q
                                                               : t.prompt_q;
      // Row 1, head 1, element 5: read by every point (prompt_q: a row inside the prompt).
      const int64_t row = target.shape[1] * target.shape[2];
      const int64_t flat = row + target.shape[2] + 5;
      target.values[static_cast<size_t>(flat)] = bad;
      t.write(file("bad.safetensors"));
      const Error e = sweep_error(spec_for(file("bad.safetensors"), 4, {34}));
      EXPECT_EQ(e.exit_code(), kExitUsage);
      EXPECT_TRUE(contains(e.problem(), "tensor '" + std::string(name) + "'")) << e.what();
      EXPECT_TRUE(contains(e.problem(), std::isnan(bad) ? "NaN" : "Inf")) << e.what();
      EXPECT_TRUE(contains(e.problem(), "flat index " + std::to_string(flat))) << e.what();
      EXPECT_TRUE(contains(e.problem(), " 1, ") && contains(e.problem(), "head 1, element 5]"))
          << e.what();
    }
  }
}

// Only the rows a point reads are read: a NaN in a token no point reaches does not matter.
TEST_F(Trace, RowsNoPointReadsAreNotRead) {
  TraceTensors t(40, 6);
  t.k.values.back() = std::numeric_limits<float>::quiet_NaN();  // token 39; the sweep reads 0..19
  t.write(file("tail.safetensors"));
  const auto report = run_sweep(spec_for(file("tail.safetensors"), 4, {16}), RunEnvironment{});
  ASSERT_EQ(report.points.size(), 1u);
  EXPECT_EQ(report.points[0].status, reports::PointStatus::ok) << report.points[0].reason;
}

// A finite value the KV dtype cannot hold would reach the cache as Inf.
TEST_F(Trace, ValuesTheKvDtypeCannotHoldAreRefused) {
  TraceTensors t(40, 6);
  t.v.values[200] = 1e6f;  // fp32 holds it, fp16 (max 65504) does not
  t.write(file("big.safetensors"), /*f16=*/false);
  const Error e = sweep_error(spec_for(file("big.safetensors"), 4));
  EXPECT_TRUE(contains(e.problem(), "tensor 'v'") && contains(e.problem(), "fp16")) << e.what();
  auto spec = spec_for(file("big.safetensors"), 4);
  spec.kv_dtypes = {DType::f32};
  EXPECT_EQ(run_sweep(spec, RunEnvironment{}).points.at(0).status, reports::PointStatus::ok);
}

// Defect 8: more prefill queries than the trace's prompt has positions used to make H2O's
// prefill non-causal; they are refused. A shorter point takes only the rows inside its prompt.
TEST_F(Trace, PromptQueriesAreCheckedAgainstThePromptLength) {
  TraceTensors(40, 6, 40).write(file("long_pq.safetensors"));  // prompt is 34 positions
  try {
    inspect_trace(file("long_pq.safetensors"));
    ADD_FAILURE() << "a prompt_q longer than the prompt was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage);
    EXPECT_TRUE(contains(e.problem(), "prompt_q has 40 rows") && contains(e.problem(), "34"))
        << e.what();
  }
  // prompt_q of all 34 prompt positions; a 16-token point gets the queries of positions 0..15.
  const TraceTensors t(40, 6, 34);
  t.write(file("pq.safetensors"));
  const Workload w = load_trace_workload(file("pq.safetensors"), shape(), 16, 4);
  ASSERT_EQ(w.num_prompt_queries(), 16);
  for (size_t i = 0; i < w.prompt_queries.size(); ++i)
    ASSERT_EQ(w.prompt_queries[i], fp16_to_fp32(fp32_to_fp16(t.prompt_q.values[i]))) << i;
  // prompt_q of the last 8 positions (26..33): a 30-token point gets positions 26..29; a
  // 20-token point none.
  TraceTensors(40, 6, 8).write(file("pq8.safetensors"));
  EXPECT_EQ(load_trace_workload(file("pq8.safetensors"), shape(), 30, 4).num_prompt_queries(), 4);
  EXPECT_EQ(load_trace_workload(file("pq8.safetensors"), shape(), 20, 4).num_prompt_queries(), 0);
  EXPECT_EQ(load_trace_workload(file("pq8.safetensors"), shape(), 34, 4).num_prompt_queries(), 8);
}

// Defect 8: a shape whose element or byte count overflows int64 is refused as such (it used to
// wrap to a small count that matched empty data_offsets).
TEST_F(Trace, ShapesWhoseCountOverflowsAreRefusedAsSuch) {
  const std::string q = R"("q": {"dtype": "F16", "shape": [1, 14, 64], "data_offsets": [0, 1792]})";
  const std::string cases[] = {
      // 2^31 x 2^31 x 4 = 2^64 elements: wraps to 0.
      R"({"k": {"dtype": "F16", "shape": [2147483648, 2147483648, 4], "data_offsets": [0, 0]},
          "v": {"dtype": "F16", "shape": [2147483648, 2147483648, 4], "data_offsets": [0, 0]}, )" +
          q + "}",
      // 2^62 elements fit, 2^64 bytes do not.
      R"({"k": {"dtype": "F32", "shape": [4611686018427387904, 1, 1], "data_offsets": [0, 0]},
          "v": {"dtype": "F32", "shape": [1, 1, 1], "data_offsets": [1792, 1796]}, )" +
          q + "}",
  };
  for (const auto& header : cases) {
    testing::write_raw_safetensors(file("ovf.safetensors"), header, 1796);
    try {
      inspect_trace(file("ovf.safetensors"));
      ADD_FAILURE() << "accepted " << header;
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), kExitUsage);
      EXPECT_TRUE(contains(e.problem(), "overflows")) << e.what();
    }
  }
  // Numbers that are not non-negative int64 are refused, not truncated or wrapped.
  for (const char* dim : {"18446744073709551615", "-1", "2.5"}) {
    testing::write_raw_safetensors(file("dim.safetensors"),
                                   std::string(R"({"k": {"dtype": "F16", "shape": [)") + dim +
                                       R"(, 2, 64], "data_offsets": [0, 0]}})",
                                   16);
    EXPECT_THROW(inspect_trace(file("dim.safetensors")), Error) << dim;
  }
}

// A directory or a FIFO is refused at once (a FIFO used to block the open forever).
TEST_F(Trace, OnlyRegularFilesAreRead) {
  ASSERT_EQ(::mkfifo(file("fifo").c_str(), 0600), 0);
  EXPECT_THROW(inspect_trace(file("fifo")), Error);
  EXPECT_THROW(inspect_trace(dir_), Error);
  EXPECT_THROW(inspect_trace(file("missing.safetensors")), Error);
}

// Defect 6: the same file named three ways gives points with the same workload axis (compare
// matches on it); a different file under the same name does not.
TEST_F(Trace, IdentityDoesNotDependOnThePathSpelling) {
  TraceTensors(40, 6).write(file("T.safetensors"));
  const fs::path cwd = fs::current_path();
  fs::current_path(dir_);
  std::vector<std::string> axes;
  for (const std::string& p :
       std::vector<std::string>{"T.safetensors", "./T.safetensors", file("T.safetensors")}) {
    const auto report = run_sweep(spec_for(p, 4), RunEnvironment{});
    ASSERT_EQ(report.points.size(), 1u);
    axes.push_back(report.points[0].axes.workload);
  }
  fs::current_path(cwd);
  EXPECT_EQ(axes[0], axes[1]);
  EXPECT_EQ(axes[0], axes[2]);
  EXPECT_EQ(axes[0].rfind("trace:T.safetensors@", 0), 0u) << axes[0];
  // What fleet runs plan with (planned_axes).
  EXPECT_EQ(axes[0], spec_for(file("T.safetensors"), 4).validate().workload_label());
  fs::create_directory(file("other"));
  TraceTensors(40, 6, 0, /*seed=*/8).write(file("other/T.safetensors"));
  EXPECT_NE(TraceFile(file("other/T.safetensors")).identity(), axes[0]);
}

// Issue 17: a trace carries its shape. Without --model the sweep runs on the trace's own model
// (no preset has 8 q-heads / 2 kv-heads x 64), at its dtype, attention scope; layer scope is
// refused with the fix, and a --model the caller gave is left alone.
TEST_F(Trace, WithoutAModelTheTraceShapeIsTheModel) {
  TraceTensors(40, 6, 0, 7, 8, 2, 64).write(file("gqa.safetensors"));
  const ModelPreset m = trace_model_preset(file("gqa.safetensors"));
  EXPECT_EQ(m.name, "trace:gqa");
  EXPECT_EQ(m.family, ModelFamily::trace);
  EXPECT_EQ(m.shape.to_string(), "8q/2kv x64 fp16");
  EXPECT_EQ(m.layers, 0);
  TraceTensors(40, 6, 0, 7, 8, 2, 64).write(file("f32.safetensors"), /*f16=*/false);
  EXPECT_EQ(trace_model_preset(file("f32.safetensors")).shape.kv_dtype, DType::f32);

  SweepSpec given = spec_for(file("gqa.safetensors"), 4);
  EXPECT_EQ(adopt(given, /*model_given=*/true, false, false), "");
  EXPECT_EQ(given.models, std::vector<std::string>{"qwen2.5-0.5b"});
  EXPECT_TRUE(given.own_models.empty());

  SweepSpec s = spec_for(file("gqa.safetensors"), 4);
  s.kv_dtypes = {DType::bf16};
  const std::string note = adopt(s, false, /*kv_dtype_given=*/false, false);
  EXPECT_NE(note.find("8q/2kv x64 fp16"), std::string::npos) << note;
  EXPECT_NE(note.find("--scope attention"), std::string::npos) << note;
  EXPECT_EQ(s.models, std::vector<std::string>{"trace:gqa"});
  EXPECT_EQ(s.kv_dtypes, std::vector<DType>{DType::f16});
  EXPECT_EQ(s.scope, Scope::attention);
  EXPECT_EQ(s.model("trace:gqa").shape.q_heads, 8);
  EXPECT_EQ(s.model("qwen2.5-0.5b").shape.q_heads, 14);  // presets still found
  const auto report = run_sweep(s, RunEnvironment{});
  ASSERT_EQ(report.points.size(), 1u);
  EXPECT_EQ(report.points[0].status, reports::PointStatus::ok) << report.points[0].reason;
  EXPECT_EQ(report.points[0].axes.model, "trace:gqa");
  EXPECT_EQ(report.points[0].axes.family, "trace");
  EXPECT_FALSE(report.points[0].accuracy.captured_rel_l2.has_value());  // the trace has no `o`

  SweepSpec layer = spec_for(file("gqa.safetensors"), 4);
  adopt(layer, false, false, /*scope_given=*/true);
  EXPECT_EQ(layer.scope, Scope::layer);
  const Error e = sweep_error(layer);
  EXPECT_EQ(e.exit_code(), kExitUsage);
  EXPECT_NE(std::string(e.what()).find("no layer dimensions"), std::string::npos) << e.what();
  EXPECT_NE(e.fix().find("--scope attention"), std::string::npos) << e.fix();
}

// A trace that carries the traced model's outputs (`o`) scores every strategy against them at
// the trace's own prompt length: an exact strategy matches what the trace says attention gave.
TEST_F(Trace, CapturedOutputsAreScoredAtTheTracePromptLength) {
  TraceTensors t(40, 6, 0, 7, 8, 2, 64);
  // o = exact attention of each step over the trace itself, in fp64 (its f32 copy is written).
  const int Hq = 8, G = 4, d = 64;
  const int64_t P = 34;
  testing::TensorData o{"o", {6, Hq, d}, std::vector<float>(6 * Hq * d)};
  for (int64_t s = 0; s < 6; ++s)
    for (int h = 0; h < Hq; ++h) {
      const float* q = t.q.values.data() + (s * Hq + h) * d;
      std::vector<double> logit(P + s + 1);
      double mx = -1e300, sum = 0;
      for (int64_t j = 0; j <= P + s; ++j) {
        double dot = 0;
        for (int e = 0; e < d; ++e) dot += q[e] * t.k.values[(j * 2 + h / G) * d + e];
        logit[j] = dot / std::sqrt(static_cast<double>(d));
        mx = std::max(mx, logit[j]);
      }
      for (auto& l : logit) sum += (l = std::exp(l - mx));
      for (int e = 0; e < d; ++e) {
        double acc = 0;
        for (int64_t j = 0; j <= P + s; ++j) acc += logit[j] * t.v.values[(j * 2 + h / G) * d + e];
        o.values[(s * Hq + h) * d + e] = static_cast<float>(acc / sum);
      }
    }
  std::vector<testing::TensorData> all = t.all();
  all.push_back(o);
  testing::write_safetensors(file("o.safetensors"), all, /*f16=*/false);
  SweepSpec s = spec_for(file("o.safetensors"), 4, {P});
  adopt(s, false, false, false);
  s.accuracy_steps = -1;
  const auto report = run_sweep(s, RunEnvironment{});
  ASSERT_EQ(report.points.size(), 1u);
  ASSERT_TRUE(report.points[0].accuracy.captured_rel_l2.has_value());
  EXPECT_LT(*report.points[0].accuracy.captured_rel_l2, 1e-5);
  // A shorter prompt attends less than the traced model did: no captured figure there.
  s.seq_lens = {P - 2};
  EXPECT_FALSE(run_sweep(s, RunEnvironment{}).points[0].accuracy.captured_rel_l2.has_value());
}

// A trace that plants a needle (issue 33, item 10): its span is scored for retrieval like a
// synthetic needle; an exact strategy retrieves it, a window that evicted it does not, and a
// span the point's prompt does not reach gives no needle figure.
TEST_F(Trace, APlantedNeedleIsScoredForRetrieval) {
  const int64_t tokens = 206, steps = 6, needle = 10, span = 3;
  TraceTensors t(tokens, steps, 0, 7, 8, 2, 64);
  const int Hq = 8, G = 4, d = 64;
  Rng rng(99);
  // Every query shares a direction u per KV head; the needle's keys point along it, so the span
  // draws most of each head's attention, and its values stand apart along w.
  std::vector<std::vector<float>> u(2, std::vector<float>(d)), w = u;
  for (auto* vecs : {&u, &w})
    for (auto& x : *vecs) {
      double n2 = 0;
      for (auto& e : x) n2 += (e = rng.normal()) * static_cast<double>(e);
      for (auto& e : x) e = static_cast<float>(e / std::sqrt(n2));
    }
  for (int64_t st = 0; st < steps; ++st)
    for (int h = 0; h < Hq; ++h)
      for (int e = 0; e < d; ++e) t.q.values[(st * Hq + h) * d + e] += 3 * u[h / G][e];
  for (int64_t j = needle; j < needle + span; ++j)
    for (int kh = 0; kh < 2; ++kh)
      for (int e = 0; e < d; ++e) {
        t.k.values[(j * 2 + kh) * d + e] = 20 * u[kh][e];
        t.v.values[(j * 2 + kh) * d + e] += 4 * w[kh][e];
      }
  const nlohmann::ordered_json meta = {{"needle_token", std::to_string(needle)},
                                       {"needle_tokens", std::to_string(span)}};
  testing::write_safetensors(file("n.safetensors"), t.all(), /*f16=*/false, meta);
  ASSERT_EQ(inspect_trace(file("n.safetensors")).needle_token, needle);
  SweepSpec s = spec_for(file("n.safetensors"), 4, {tokens - steps});
  adopt(s, false, false, false);
  s.strategies = {"cpu-only", "streamingllm"};
  s.strategy_options["streamingllm.sinks"] = "4";
  s.strategy_options["streamingllm.window"] = "32";
  s.accuracy_steps = -1;
  const auto report = run_sweep(s, RunEnvironment{});
  ASSERT_EQ(report.points.size(), 2u);
  for (const auto& p : report.points) {
    SCOPED_TRACE(p.axes.strategy);
    ASSERT_TRUE(p.accuracy.has_needle());
    if (p.axes.strategy == "cpu-only") EXPECT_DOUBLE_EQ(p.accuracy.needle_success_rate, 1.0);
    if (p.axes.strategy == "streamingllm") EXPECT_DOUBLE_EQ(p.accuracy.needle_success_rate, 0.0);
  }
  // A prompt that ends before the span holds no needle.
  s.seq_lens = {needle + 1};
  s.strategies = {"cpu-only"};
  s.strategy_options.clear();
  EXPECT_FALSE(run_sweep(s, RunEnvironment{}).points[0].accuracy.has_needle());
}

TEST_F(Trace, ANeedleSpanOutsideThePromptIsRefused) {
  TraceTensors t(40, 6, 0, 7, 8, 2, 64);
  for (const auto& [first, count] :
       {std::pair<std::string, std::string>{"33", "2"}, {"-1", "2"}, {"3", "0"}, {"x", "1"}}) {
    testing::write_safetensors(file("bad.safetensors"), t.all(), true,
                               {{"needle_token", first}, {"needle_tokens", count}});
    try {
      inspect_trace(file("bad.safetensors"));
      ADD_FAILURE() << "accepted needle " << first << " + " << count;
    } catch (const Error& e) {
      EXPECT_TRUE(contains(e.what(), "needle span")) << e.what();
      EXPECT_TRUE(contains(e.fix(), "needle_token + needle_tokens")) << e.fix();
    }
  }
}

}  // namespace
}  // namespace hb::bench
