// `--workload FAMILY:KNOB=VALUE,...`: the parser, the label reports carry, the help text and
// core/README.md all come from one table of knobs, and bad text is an exit-2 error naming the
// knob and its range.
#include <cmath>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/workload.h"

namespace hb {
namespace {

using Kind = WorkloadSpec::Kind;

// The usage error `text` raises, or "" when it parses.
std::string refusal(const std::string& text) {
  try {
    parse_workload_spec(text);
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage) << text;
    return e.what();
  }
  return "";
}

TEST(WorkloadSpec, FamiliesParseToTheirDefaults) {
  EXPECT_EQ(parse_workload_spec("llama-like").kind, Kind::llama_like);
  EXPECT_EQ(parse_workload_spec("needle").kind, Kind::retrieval);
  EXPECT_EQ(parse_workload_spec("diffuse").kind, Kind::structured);
  EXPECT_EQ(parse_workload_spec("structured").kind, Kind::structured);  // the old name
  EXPECT_EQ(parse_workload_spec("uniform").kind, Kind::uniform);
  // diffuse is the original generator: WorkloadSpec{} as before.
  EXPECT_EQ(parse_workload_spec("diffuse").label(), WorkloadSpec{}.label());
  EXPECT_EQ(parse_workload_spec("llama-like").sink_mass, 0.3f);
  EXPECT_TRUE(parse_workload_spec("needle").needle);
  EXPECT_FALSE(parse_workload_spec("llama-like").needle);
  EXPECT_EQ(parse_workload_kind("llama-like:drift=0.3"), Kind::llama_like);
}

TEST(WorkloadSpec, KnobsSetTheirFieldsAndTheLabelNamesOnlyNonDefaultOnes) {
  const WorkloadSpec s = parse_workload_spec("llama-like:drift=0.25,sink_mass=0.4,topics=6");
  EXPECT_FLOAT_EQ(s.sink_mass, 0.4f);
  EXPECT_FLOAT_EQ(s.query_drift, 0.25f);
  EXPECT_EQ(s.topics, 6);
  EXPECT_EQ(s.label(), "llama-like:sink_mass=0.4,topics=6,drift=0.25");  // table order
  EXPECT_EQ(parse_workload_spec(s.label()).label(), s.label());          // reads back
  EXPECT_EQ(parse_workload_spec("llama-like").label(), "llama-like");
  EXPECT_EQ(parse_workload_spec("llama-like:sink_mass=0.3").label(), "llama-like");
  EXPECT_EQ(parse_workload_spec("structured").label(), "diffuse");
  EXPECT_EQ(parse_workload_spec("needle:needle_at=0.1,needle_tokens=4").label(),
            "needle:needle_at=0.1,needle_tokens=4");
}

// The original needle workload (Kind::needle, the tests' and old reports' `needle`) is reachable
// from the command line as diffuse:needle=1, and it is the very same workload.
TEST(WorkloadSpec, DiffuseWithNeedleIsTheOldNeedleWorkload) {
  WorkloadSpec old;
  old.kind = Kind::needle;
  const WorkloadSpec parsed = parse_workload_spec("diffuse:needle=1");
  EXPECT_EQ(old.label(), "diffuse:needle=1");
  EXPECT_EQ(parsed.label(), "diffuse:needle=1");
  const AttentionShape shape{4, 2, 64, DType::f16};
  const Workload a = make_workload(shape, 300, 2, old), b = make_workload(shape, 300, 2, parsed);
  EXPECT_EQ(a.prompt.k, b.prompt.k);
  EXPECT_EQ(a.prompt.v, b.prompt.v);
  EXPECT_EQ(a.steps[1].q, b.steps[1].q);
  EXPECT_EQ(a.needle_token, 150);
  EXPECT_EQ(b.needle_token, 150);
  EXPECT_EQ(a.source, "synthetic:diffuse:needle=1");
}

TEST(WorkloadSpec, BadTextIsAUsageErrorNamingTheKnobAndItsRange) {
  EXPECT_NE(refusal("zipf").find("unknown workload 'zipf'"), std::string::npos);
  EXPECT_NE(refusal("llama_like").find("llama-like"), std::string::npos);  // the fix lists them
  const std::string unknown = refusal("llama-like:sink=0.4");
  EXPECT_NE(unknown.find("no knob 'sink'"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("sink_mass"), std::string::npos) << unknown;  // lists the real ones
  // A knob of another family is unknown to this one.
  EXPECT_NE(refusal("diffuse:sink_mass=0.4").find("no knob 'sink_mass'"), std::string::npos);
  EXPECT_NE(refusal("llama-like:needle_mass=0.4").find("no knob"), std::string::npos);
  const std::string range = refusal("llama-like:sink_mass=1.5");
  EXPECT_NE(range.find("sink_mass"), std::string::npos) << range;
  EXPECT_NE(range.find(">= 0 and <= 0.95"), std::string::npos) << range;
  for (const char* bad : {"llama-like:drift=nan", "llama-like:drift=inf", "llama-like:drift=-0.1",
                          "llama-like:drift=", "llama-like:drift=0.1x", "llama-like:topics=2.5",
                          "llama-like:topics=0", "llama-like:drift", "llama-like:=3",
                          "llama-like:drift=0.1,", "llama-like:", "llama-like:drift=0.1,drift=0.2",
                          "diffuse:needle=2", "needle:sink_mass=0.5,needle_mass=0.5"})
    EXPECT_NE(refusal(bad), "") << bad;
  EXPECT_NE(refusal("llama-like:drift=0.1,drift=0.2").find("twice"), std::string::npos);
  EXPECT_NE(refusal("llama-like:topics=2.5").find("topics"), std::string::npos);
}

// Every knob the parser knows is in run --help (workload_help) with its default and range, and
// in core/README.md.
TEST(WorkloadSpec, EveryKnobIsDocumented) {
  std::ifstream in(std::string(HB_SOURCE_DIR) + "/core/README.md");
  std::stringstream readme;
  readme << in.rdbuf();
  const std::string help = workload_help();
  std::istringstream lines(help);
  int knobs = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("      ", 0) != 0) continue;  // knob lines: "      name [default] lo..hi: ..."
    const std::string name = line.substr(6, line.find(' ', 6) - 6);
    ++knobs;
    EXPECT_NE(readme.str().find("`" + name + "`"), std::string::npos) << name;
    EXPECT_NE(line.find(".."), std::string::npos) << line;
  }
  EXPECT_GE(knobs, 20);
  EXPECT_NE(help.find("sink_mass [0.3] 0..0.95"), std::string::npos) << help;
}

// Values are not pure zero-mean noise: llama-like's share a mean direction, so the exact output
// under spread-out attention keeps a norm (the diffuse family's stay zero-mean, as before).
TEST(WorkloadSpec, LlamaLikeValuesShareAMeanDirection) {
  const AttentionShape shape{4, 1, 64, DType::f32};
  auto mean_norm = [&](const std::string& spec) {
    const Workload w = make_workload(shape, 2000, 1, parse_workload_spec(spec));
    std::vector<double> m(64, 0.0);
    for (int64_t t = 0; t < w.prompt_len(); ++t)
      for (int j = 0; j < 64; ++j) m[j] += w.prompt.v_row(t, 0)[j] / double(w.prompt_len());
    double n = 0;
    for (double x : m) n += x * x;
    return std::sqrt(n);
  };
  EXPECT_NEAR(mean_norm("llama-like"), 0.5 * 8, 0.5);  // value_mean 0.5 x sqrt(64)
  EXPECT_NEAR(mean_norm("llama-like:value_mean=1"), 8, 0.5);
  EXPECT_LT(mean_norm("diffuse"), 0.5);
}

TEST(WorkloadSpec, LlamaLikeHandlesEdgeSizesAndIsSeeded) {
  for (int64_t n : {0, 1, 3, 17}) {
    const Workload w = make_workload({2, 1, 16, DType::f16}, n, 2, parse_workload_spec("needle"));
    EXPECT_EQ(w.prompt_len(), n);
    for (const auto& s : w.steps)
      for (float x : s.q) EXPECT_TRUE(std::isfinite(x));
  }
  const AttentionShape shape{8, 2, 64, DType::f16};
  WorkloadSpec a = parse_workload_spec("llama-like");
  const Workload x = make_workload(shape, 500, 2, a), y = make_workload(shape, 500, 2, a);
  EXPECT_EQ(x.prompt.k, y.prompt.k);
  EXPECT_EQ(x.steps[1].q, y.steps[1].q);
  a.seed = 7;
  EXPECT_NE(make_workload(shape, 500, 2, a).prompt.k, x.prompt.k);
  EXPECT_THROW(make_workload({2, 1, 2, DType::f16}, 10, 1, parse_workload_spec("llama-like")),
               Error);
}

}  // namespace
}  // namespace hb
