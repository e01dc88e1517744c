// Bad input found by an adversarial pass over the built binary: each one crashed, ran with a
// silently wrong value, or failed late. Now every one is refused up front in the one error style
// (hybridbench: error: ... / fix: ..., exit 2), or runs truthfully.
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/child_process.h"
#include "tests/cli_fixture.h"

namespace hb::cli_test {
namespace {

// A small real sweep: one short length (kSmall), four decode steps, one pass.
const std::string kBase =
    "run --model qwen2.5-0.5b --decode-steps 4 --repetitions 1 --timeout 2 -q ";
const std::string kSmall = kBase + "--seq-len 1k ";

class Refusals : public CliTest {
 protected:
  // Exit 2 in the one error style, the message holding every one of `words`.
  // A run gets its own --out: the default name (the second it started) is shared by the tests
  // ctest runs beside it, whose lock would refuse it for another reason.
  void expect_refused(std::string args, std::initializer_list<const char*> words) {
    if (args.rfind("run ", 0) == 0 && args.find("--out") == std::string::npos)
      args += " --out " + file("refused.json");
    SCOPED_TRACE(args);
    EXPECT_EQ(run(args), 2) << out_;
    EXPECT_NE(out_.find("hybridbench: error: "), std::string::npos) << out_;
    EXPECT_NE(out_.find("\n  fix: "), std::string::npos) << out_;
    for (const char* w : words) EXPECT_NE(out_.find(w), std::string::npos) << w << "\n" << out_;
  }
  // Runs `script` under bash (for ulimit); the exit status, both streams in out_.
  int run_in_shell(const std::string& script) {
    const std::string cmd =
        "bash -c '" + script + "' > " + file("out.txt") + " 2> " + file("err.txt");
    const int st = std::system(cmd.c_str());
    out_ = slurp(file("out.txt")) + slurp(file("err.txt"));
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }
  // A platform preset with one figure's value replaced.
  std::string platform_with(const std::string& field, const std::string& value) {
    std::ifstream in(std::string(HB_SOURCE_DIR) + "/model/profiles/a100-40gb-pcie4-spr.json");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    size_t at = text.find("\"" + field + "\": ");
    EXPECT_NE(at, std::string::npos) << field;
    at += field.size() + 4;
    if (text[at] == '{') at = text.find("\"value\": ", at) + 9;  // {"value": N, "source": ...}
    const size_t end = text.find_first_of(",}", at);
    text.replace(at, end - at, value);
    const std::string path = file("platform.json");
    std::ofstream(path) << text;
    return path;
  }
};

// --opt numbers: one checked conversion, never a cast of a double (1e19 ran with 48 tokens,
// recorded a negative chunk, or allocated until bad_alloc; 2048.7 was truncated).
TEST_F(Refusals, StrategyOptionNumbersAreChecked) {
  for (const char* opt : {"quest.budget=1e19", "quest.budget=2048.7", "offload.chunk_tokens=1e19",
                          "h2o.heavy=1e19", "streamingllm.window=0", "hybridgen.interval=1e9"})
    expect_refused(kSmall + "--strategy quest,offload,h2o,streamingllm,hybridgen --opt " + opt,
                   {"--opt ", "whole number"});
}

// The smallest budgets: hybridgen and its ablations segfaulted at --kv-budget 1 (shipped-row
// buffers of size 0 written to); every strategy now runs them and is scored.
TEST_F(Refusals, EveryStrategyRunsTheSmallestBudgets) {
  EXPECT_EQ(run(kSmall + "--strategy all --kv-budget 1 --out " + file("r.json")), 0) << out_;
  EXPECT_EQ(out_.find("\"status\": \"error\""), std::string::npos) << out_;
  const std::string report = slurp(file("r.json"));
  EXPECT_NE(report.find("\"strategy\": \"hybridgen-serial\""), std::string::npos);
  EXPECT_EQ(report.find("\"status\": \"error\""), std::string::npos) << report.substr(0, 4000);
}

// Under a memory limit a refused thread aborted (exit 134); now exit 2 names the option.
TEST_F(Refusals, AMemoryLimitIsAnErrorNotAnAbort) {
  if (test::kAddressSanitizer)
    GTEST_SKIP() << "AddressSanitizer reserves more address space than this test allows";
  const int st = run_in_shell("ulimit -v 200000; exec " + std::string(HB_BINARY) + " " + kSmall +
                              "--strategy cpu-only,quest --out " + file("l.json"));
  EXPECT_NE(st, 134) << out_;
  EXPECT_EQ(out_.find("terminate called"), std::string::npos) << out_;
  if (st != 0) {
    EXPECT_EQ(st, 2) << out_;
    EXPECT_NE(out_.find("hybridbench: error: "), std::string::npos) << out_;
    EXPECT_NE(out_.find("threads"), std::string::npos) << out_;
  }
}

// Platform figures past physical bounds gave negative step times reported as settled.
TEST_F(Refusals, ImplausiblePlatformFiguresAreRefused) {
  for (auto [field, value] : {std::pair{"launch_us", "1e308"},
                              {"memory_gbps", "1e-308"},
                              {"attention_efficiency", "1e-308"},
                              {"select_gelems", "1e-308"},
                              {"sync_us", "1e-308"}}) {
    const std::string p = platform_with(field, value);
    expect_refused(kSmall + "--mode model --strategy cpu-only --platform " + p,
                   {field, "platform.json"});
  }
  const std::string p = platform_with("numa_node", "7");
  expect_refused(kSmall + "--mode model --strategy cpu-only --platform " + p,
                 {"accelerator.numa_node 7", "node(s) 0"});
}

// A --timeout shorter than one step used to stop each strategy after one sample, reported as
// settled at 0% noise. The time-out now waits for --min-samples: every point has at least that
// many samples (whether five of them settle within the target is the machine's business).
TEST_F(Refusals, OneSampleIsNeverSettled) {
  EXPECT_EQ(run("run --model qwen2.5-0.5b --seq-len 1k --decode-steps 4 --repetitions 1 "
                "--strategy cpu-only,quest --timeout 1ms --min-samples 5 --out " +
                file("t.json")),
            0)
      << out_;
  const auto report = nlohmann::json::parse(slurp(file("t.json")));
  ASSERT_EQ(report["points"].size(), 2u);
  for (const auto& p : report["points"]) {
    EXPECT_EQ(p["status"], "ok") << p.dump();
    EXPECT_GE(p["step"]["samples_ns"].size(), 5u) << p["axes"].dump();
  }
  EXPECT_EQ(out_.find("± 0.0% faster"), std::string::npos) << out_;
}

// Slips that used to fall back silently, and economics caught only after the sweep.
TEST_F(Refusals, SilentFallbacksAreRefused) {
  expect_refused(kBase + "--strategy cpu-only --seq-len 1k,1k", {"--seq-len", "twice"});
  expect_refused(kBase + "--strategy cpu-only --seq-len 1k,1024", {"--seq-len", "twice"});
  expect_refused(kSmall + "--strategy cpu-only --batch 1,,2", {"--batch", "empty item"});
  expect_refused(kSmall + "--strategy cpu-only,,quest", {"--strategy", "empty item"});
  expect_refused(kSmall + "--strategy cpu-only --out ''", {"--out"});
  expect_refused(kSmall + "--strategy cpu-only --min-samples 10 --max-samples 5",
                 {"--max-samples 5", "--min-samples 10"});
  for (const char* cxl : {"bandwidth=1e308,latency=100", "bandwidth=50,latency=1e308"})
    expect_refused(kSmall + "--strategy cpu-only --emulate-cxl " + std::string(cxl),
                   {"--emulate-cxl", "is not a number in (0, "});
  for (const char* bad :
       {"--price 1e300", "--price 1e-300", "--power gpu=1e308", "--price purchase=1e300,years=1"}) {
    expect_refused(kSmall + "--strategy cpu-only " + bad + " --out " + file("p.json"), {"--p"});
    EXPECT_EQ(out_.find("bug in the caller"), std::string::npos) << out_;
    EXPECT_FALSE(std::filesystem::exists(file("p.json.partial.jsonl"))) << "a point ran: " << bad;
  }
}

// CLI11's own errors in the same style, with the nearest option for a typo.
TEST_F(Refusals, ParseErrorsUseTheOneErrorStyle) {
  expect_refused("run --decode-steps 0", {"--decode-steps '0'", "from 1 to"});
  expect_refused("run --timeout 1 --timeout 2", {"--timeout"});
  expect_refused("run --sed-len 1k", {"--sed-len", "did you mean --seq-len"});
  expect_refused("frobnicate", {"subcommand", "run, compare"});
}

// Tensor parallelism and precision (model/tensor_parallel.h): a tp the node cannot split the
// model over, a tp or precision in a measured run, and an unknown precision are refused up front.
TEST_F(Refusals, ImpossibleDeploymentsAreRefused) {
  const std::string model =
      "run --mode model --model llama-3.1-70b --seq-len 1k --decode-steps 4 -q --platform ";
  expect_refused(model + "h100-pcie5-cxl0 --tp 3", {"--tp 3", "does not divide"});
  expect_refused(model + "h100-pcie5-cxl0 --tp 16", {"--tp 16", "exceeds"});
  expect_refused(model + "gh200-c2c --tp 2", {"--tp 2", "exceeds", "1 GPU"});
  expect_refused(model + "h100-pcie5-cxl0 --precision int4", {"int4", "fp8"});
  expect_refused(model + "h100-pcie5-cxl0 --tp four", {"four"});
  expect_refused(kSmall + "--tp 2", {"--tp", "model mode"});
}

}  // namespace
}  // namespace hb::cli_test
