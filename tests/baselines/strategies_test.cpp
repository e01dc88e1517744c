// Each baseline driven directly with the cpu accelerator on a small problem: its output is
// exact attention over the tokens it says it attended, and its traffic matches hand-computed
// values.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "tests/baselines/harness.h"

namespace hb::test {
namespace {

// qwen2.5-0.5b: 14 query heads, 2 KV heads, d = 64, fp16: 512 bytes of K+V per token, a K (or
// V) page block of 16 tokens is 2 KiB.
constexpr int64_t kTokenBytes = 2 * 2 * 64 * 2;
constexpr int64_t kBlock = 16 * 64 * 2;
constexpr int64_t kQBytes = 14 * 64 * 4, kKvRowBytes = 2 * 64 * 4, kOBytes = 14 * 64 * 4;

struct Ran {
  std::vector<StepResult> steps;
  PlanResult plan;
};

Ran run(Harness& h, const std::string& name, std::map<std::string, std::string> opts = {}) {
  auto s = h.make(name, std::move(opts));
  Ran r;
  r.plan = s->plan(h.problem, h.platform);
  EXPECT_EQ(r.plan.status, PlanStatus::ok) << name << ": " << r.plan.reason;
  if (r.plan.status != PlanStatus::ok) return r;
  s->load();
  for (int i = 0; i < h.problem.decode_steps(); ++i) r.steps.push_back(Harness::run_step(*s, i));
  return r;
}

TEST(Strategies, OutputsAreExactAttentionOverWhatTheyAttended) {
  Harness h("qwen2.5-0.5b", 700, 4, 2, WorkloadSpec::Kind::structured);
  const std::vector<std::pair<std::string, std::map<std::string, std::string>>> cases = {
      {"full-gpu", {}},
      {"cpu-only", {}},
      {"offload", {{"offload.chunk_tokens", "128"}}},
      {"h2o", {}},
      {"streamingllm", {}},
      {"infinigen", {}},
      {"quest", {{"quest.budget", "128"}}},
      {"quest", {{"quest.budget", "128"}, {"quest.offload", "1"}}},
  };
  for (const auto& [name, opts] : cases) {
    SCOPED_TRACE(name + (opts.count("quest.offload") ? " offloaded" : ""));
    Ran r = run(h, name, opts);
    ASSERT_EQ(r.steps.size(), 4u);
    for (int s = 0; s < 4; ++s) {
      const StepResult& out = r.steps[s];
      EXPECT_LT(h.max_error_vs_attended(s, out), 2e-4) << "step " << s;
      if (out.attended.empty()) continue;
      ASSERT_EQ(out.attended.size(), 2u * 14);
      const int64_t ctx = h.problem.context_at(s);
      for (const auto& a : out.attended) {
        // Distinct original positions inside the context; the new token is always attended.
        EXPECT_EQ(std::set<int64_t>(a.begin(), a.end()).size(), a.size());
        EXPECT_GE(*std::min_element(a.begin(), a.end()), 0);
        EXPECT_LT(*std::max_element(a.begin(), a.end()), ctx);
        EXPECT_NE(std::find(a.begin(), a.end(), ctx - 1), a.end());
      }
    }
  }
}

TEST(Strategies, OffloadMovesTheWholeKvEveryStep) {
  for (int batch : {1, 2}) {
    Harness h("qwen2.5-0.5b", 200, 3, batch, WorkloadSpec::Kind::structured);
    Ran r = run(h, "offload", {{"offload.chunk_tokens", "64"}});
    for (int s = 0; s < 3; ++s) {
      const Traffic& t = r.steps[s].traffic;
      const int64_t ctx = 200 + s + 1;  // 201..203 tokens: 13 pages of 16
      EXPECT_EQ(t.h2d_bytes, 13 * 16 * kTokenBytes * batch);
      EXPECT_EQ(t.d2h_bytes, 2 * kKvRowBytes * batch);  // the new k, v go to the host cache
      EXPECT_EQ(t.bytes_read[1][int(MemoryKind::local_dram)], 13 * 16 * kTokenBytes * batch);
      EXPECT_EQ(t.bytes_read[1][int(MemoryKind::accelerator)], ctx * kTokenBytes * batch);
      EXPECT_EQ(t.bytes_written[0][int(MemoryKind::local_dram)], kTokenBytes * batch);
      EXPECT_EQ(t.kernel_launches, 4 + 1);  // ceil(203 / 64) chunks + merge
      EXPECT_DOUBLE_EQ(t.accelerator_flops, 4.0 * 14 * 64 * ctx * batch);
    }
    EXPECT_EQ(r.plan.parameters.at("chunk_tokens"), "64");
  }
}

TEST(Strategies, CpuOnlyMovesOnlyQueryNewKvAndOutput) {
  Harness h("qwen2.5-0.5b", 200, 2, 2, WorkloadSpec::Kind::structured);
  Ran r = run(h, "cpu-only");
  for (int s = 0; s < 2; ++s) {
    const Traffic& t = r.steps[s].traffic;
    EXPECT_EQ(t.d2h_bytes, 2 * (kQBytes + 2 * kKvRowBytes));
    EXPECT_EQ(t.h2d_bytes, 2 * kOBytes);
    EXPECT_EQ(t.bytes_read[0][int(MemoryKind::local_dram)], (200 + s + 1) * kTokenBytes * 2);
  }
}

// The two whole-cache strategies (baselines/whole_cache.cpp) count the same dense attention,
// each on its home: every cached token read once, the new one stored, 4 x q_heads x head_dim
// flops a token, by the accelerator in its memory (full-gpu) or by the CPU on the host tier
// (cpu-only); nothing else is counted on the other side.
TEST(Strategies, WholeCacheCountsDenseAttentionOnItsHome) {
  Harness h("qwen2.5-0.5b", 200, 2, 2, WorkloadSpec::Kind::structured);
  // Step s of `name`: dense attention by `who` on memory `home`, nothing read by the other
  // processor, `launches` kernels and `syncs` waits.
  auto expect_dense = [&](const std::string& name, Processor who, MemoryKind home, int64_t launches,
                          int64_t syncs) {
    const Ran r = run(h, name);
    const Processor other = who == Processor::cpu ? Processor::accelerator : Processor::cpu;
    for (int s = 0; s < 2; ++s) {
      const Traffic& t = r.steps[s].traffic;
      const int64_t ctx = 200 + s + 1;
      EXPECT_EQ(t.bytes_read[int(who)][int(home)], ctx * kTokenBytes * 2) << name;
      EXPECT_EQ(t.bytes_written[int(who)][int(home)], kTokenBytes * 2) << name;
      EXPECT_EQ(who == Processor::cpu ? t.cpu_flops : t.accelerator_flops,
                4.0 * 14 * 64 * static_cast<double>(ctx) * 2)
          << name;
      EXPECT_EQ(who == Processor::cpu ? t.accelerator_flops : t.cpu_flops, 0) << name;
      EXPECT_EQ(t.total_read(other), 0) << name;
      EXPECT_EQ(t.kernel_launches, launches) << name;
      EXPECT_EQ(t.syncs, syncs) << name;
    }
  };
  expect_dense("full-gpu", Processor::accelerator, MemoryKind::accelerator, 1, 1);
  expect_dense("cpu-only", Processor::cpu, MemoryKind::local_dram, 0, 2);
}

TEST(Strategies, QuestOffloadedMovesExactlyTheSelectedPages) {
  for (int batch : {1, 2}) {
    Harness h("qwen2.5-0.5b", 500, 3, batch, WorkloadSpec::Kind::structured);
    // 96-token budget: 6 pages per query head, the current one included. Each query head picks
    // its own pages; a KV head's 7 query heads share what they both picked, so the link moves
    // the union of their pages once.
    Ran r = run(h, "quest", {{"quest.budget", "96"}, {"quest.offload", "1"}});
    EXPECT_EQ(r.plan.parameters.at("budget_pages"), "6");
    int64_t shared = 0, wider = 0;  // over steps: pages picked twice; unions above one head's
    for (int s = 0; s < 3; ++s) {
      const StepResult& out = r.steps[s];
      const Traffic& t = out.traffic;
      ASSERT_EQ(out.attended.size(), static_cast<size_t>(batch) * 14);
      int64_t union_pages = 0;
      for (int b = 0; b < batch; ++b)
        for (int kvh = 0; kvh < 2; ++kvh) {
          std::set<int64_t> pages;
          for (int g = 0; g < 7; ++g)
            for (int64_t tk : out.attended[static_cast<size_t>(b) * 14 + kvh * 7 + g])
              pages.insert(tk / 16);
          union_pages += static_cast<int64_t>(pages.size());
          EXPECT_LE(pages.size(), 7u * 6);
          shared += 7 * 6 - static_cast<int64_t>(pages.size());
          wider += pages.size() > 6u;
        }
      EXPECT_EQ(t.h2d_bytes, union_pages * 2 * kBlock);
      // new k, v; the 5 page ids each query head picked (the current page is known)
      EXPECT_EQ(t.d2h_bytes, batch * (2 * kKvRowBytes + 14 * 5 * 4));
      // 5 full pages plus the current one (ctx 501..503: 5..7 tokens in page 31).
      const int64_t ctx = 500 + s + 1;
      for (const auto& a : out.attended)
        EXPECT_EQ(static_cast<int64_t>(a.size()), 5 * 16 + (ctx - 31 * 16));
    }
    EXPECT_GT(shared, 0);  // the current page at least: the union is not a plain sum
    EXPECT_GT(wider, 0);   // query heads of one KV head chose differently: per-head selection
    // Resident Quest moves no KV over the link: only the page ids come back, for the host to
    // build the attention's page tables.
    Ran res = run(h, "quest", {{"quest.budget", "96"}});
    for (const auto& out : res.steps) {
      EXPECT_EQ(out.traffic.h2d_bytes, 0);
      EXPECT_EQ(out.traffic.d2h_bytes, batch * 14 * 5 * 4);
    }
  }
}

TEST(Strategies, InfiniGenMovesExactlyTheSelectedRows) {
  for (int batch : {1, 2}) {
    Harness h("qwen2.5-0.5b", 600, 3, batch, WorkloadSpec::Kind::needle);
    Ran r = run(h, "infinigen");
    EXPECT_EQ(r.plan.parameters.at("partial_dims"), "13");  // ceil(0.2 * 64)
    for (int s = 0; s < 3; ++s) {
      const StepResult& out = r.steps[s];
      const int64_t k = static_cast<int64_t>(out.attended[0].size()) - 1;  // minus the new token
      EXPECT_GE(k, 1);
      EXPECT_LE(k, (600 + s + 1) / 5 + 1);  // at most 20% of the context
      for (const auto& a : out.attended) EXPECT_EQ(static_cast<int64_t>(a.size()), k + 1);
      // 2 * k * Hkv * d * b for every sequence, plus nothing else up the link.
      EXPECT_EQ(out.traffic.h2d_bytes, 2 * k * 2 * 64 * 2 * batch);
      // the new k, v; each KV head's count within alpha; the selected ids
      EXPECT_EQ(out.traffic.d2h_bytes, batch * 2 * kKvRowBytes + batch * 2 * 4 + batch * 2 * k * 4);
      EXPECT_EQ(out.traffic.bytes_read[0][int(MemoryKind::local_dram)], 2 * k * 2 * 64 * 2 * batch);
    }
  }
}

TEST(Strategies, PruningStrategiesStayOnTheAccelerator) {
  Harness h("qwen2.5-0.5b", 1000, 3, 1, WorkloadSpec::Kind::structured);
  Ran st = run(h, "streamingllm");
  EXPECT_EQ(st.plan.parameters.at("window"), "196");  // 20% of 1000 minus 4 sinks
  for (const auto& out : st.steps) {
    EXPECT_EQ(out.traffic.h2d_bytes, 0);
    EXPECT_EQ(out.traffic.d2h_bytes, 0);
    EXPECT_EQ(out.traffic.bytes_read[1][int(MemoryKind::accelerator)], 200 * kTokenBytes);
    for (const auto& a : out.attended) {
      EXPECT_EQ(a.size(), 200u);
      for (int64_t t = 0; t < 4; ++t)
        EXPECT_NE(std::find(a.begin(), a.end(), t), a.end());  // the sinks
    }
  }
  Ran ho = run(h, "h2o");
  EXPECT_EQ(ho.plan.parameters.at("heavy_tokens"), "100");
  EXPECT_EQ(ho.plan.parameters.at("recent_tokens"), "100");
  for (const auto& out : ho.steps) {
    EXPECT_EQ(out.traffic.h2d_bytes, 0);
    EXPECT_EQ(out.traffic.d2h_bytes, 2 * 4);  // the victims' slots (host-driven writes)
    for (const auto& a : out.attended) EXPECT_EQ(a.size(), 201u);  // budget + the new token
  }
}

TEST(Strategies, H2oKeepsTheTokensEveryQueryAttends) {
  // Sinks and the needle collect probability from every query: H2O must keep them, and keep
  // the recent window, whatever else it evicts.
  Harness h("qwen2.5-0.5b", 2000, 6, 1, WorkloadSpec::Kind::needle);
  Ran r = run(h, "h2o");
  const int64_t needle = h.ws[0].needle_token;
  for (size_t s = 0; s < r.steps.size(); ++s) {
    const int64_t ctx = h.problem.context_at(static_cast<int>(s));
    for (const auto& a : r.steps[s].attended) {
      const std::set<int64_t> kept(a.begin(), a.end());
      for (int64_t t = 0; t < 4; ++t) EXPECT_TRUE(kept.count(t)) << "sink " << t;
      EXPECT_TRUE(kept.count(needle));
      for (int64_t t = ctx - 200; t < ctx; ++t) ASSERT_TRUE(kept.count(t)) << "recent " << t;
    }
  }
}

TEST(Strategies, StreamingLlmWindowOption) {
  Harness h("qwen2.5-0.5b", 400, 3, 1, WorkloadSpec::Kind::structured);
  Ran r = run(h, "streamingllm", {{"streamingllm.window", "50"}, {"streamingllm.sinks", "2"}});
  EXPECT_EQ(r.plan.parameters.at("budget_tokens"), "52");
  for (size_t s = 0; s < r.steps.size(); ++s) {
    const int64_t ctx = h.problem.context_at(static_cast<int>(s));
    std::vector<int64_t> want = {0, 1};
    for (int64_t t = ctx - 50; t < ctx; ++t) want.push_back(t);
    auto got = r.steps[s].attended[0];
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, want);
  }
}

TEST(Strategies, PlansReportOomOnASmallAccelerator) {
  Harness h("qwen2.5-0.5b", 4000, 2, 1, WorkloadSpec::Kind::structured, 256 * 1024);
  // H2O and StreamingLLM held resident (their .offload=0; by default they offload instead).
  for (const auto& [name, opts] :
       std::vector<std::pair<std::string, std::map<std::string, std::string>>>{
           {"full-gpu", {}},
           {"h2o", {{"h2o.offload", "0"}}},
           {"streamingllm", {{"streamingllm.offload", "0"}}},
           {"infinigen", {}},
           {"offload", {}}}) {
    auto s = h.make(name, opts);
    PlanResult p = s->plan(h.problem, h.platform);
    EXPECT_EQ(p.status, PlanStatus::oom) << name;
    EXPECT_NE(p.reason.find("MiB"), std::string::npos) << name << ": " << p.reason;
  }
  for (const std::string name : {"h2o", "streamingllm"})
    EXPECT_EQ(h.make(name)->plan(h.problem, h.platform).parameters.at("deployment"), "offloaded");
  // All-resident Quest (quest.offload=0) does not fit; by default it offloads instead
  // (tests/baselines/deployment_test.cpp).
  PlanResult q0 = h.make("quest", {{"quest.offload", "0"}})->plan(h.problem, h.platform);
  EXPECT_EQ(q0.status, PlanStatus::oom);
  EXPECT_NE(q0.reason.find("MiB"), std::string::npos) << q0.reason;
  // Offloading strategies fit where the resident ones do not: offloaded Quest keeps 128 KiB of
  // page bounds and its landing pages (2 x 2 KiB each) on the accelerator, not the 2 MiB of KV.
  Harness big("qwen2.5-0.5b", 4000, 2, 1, WorkloadSpec::Kind::structured, 1024 * 1024);
  EXPECT_EQ(big.make("quest", {{"quest.offload", "0"}})->plan(big.problem, big.platform).status,
            PlanStatus::oom);
  auto q = big.make("quest", {{"quest.offload", "1"}, {"quest.budget", "64"}});
  EXPECT_EQ(q->plan(big.problem, big.platform).status, PlanStatus::ok);
  auto o = h.make("offload", {{"offload.chunk_tokens", "64"}});
  EXPECT_EQ(o->plan(h.problem, h.platform).status, PlanStatus::ok);
}

TEST(Strategies, RejectBadOptions) {
  Harness h("qwen2.5-0.5b", 100, 2, 1, WorkloadSpec::Kind::structured);
  EXPECT_THROW(h.make("h2o", {{"h2o.bogus", "1"}}), Error);
  EXPECT_THROW(h.make("quest", {{"quest.budget", "lots"}}), Error);
  // Out-of-range values are refused when the strategy is made, as the runner does for every
  // strategy before a sweep starts (so `run` exits 2 up front instead of failing each point).
  EXPECT_THROW(h.make("quest", {{"quest.offload", "2"}}), Error);
  EXPECT_THROW(h.make("quest", {{"quest.offload", "yes"}}), Error);
  EXPECT_THROW(h.make("infinigen", {{"infinigen.fit_fetch", "2"}}), Error);
  EXPECT_THROW(h.make("infinigen", {{"infinigen.partial_ratio", "0"}}), Error);
  EXPECT_THROW(h.make("h2o", {{"h2o.heavy_ratio", "-1"}}), Error);
  EXPECT_THROW(h.make("offload", {{"offload.chunk_tokens", "0"}}), Error);
  EXPECT_THROW(h.make("streamingllm", {{"streamingllm.window", "0"}}), Error);
}

}  // namespace
}  // namespace hb::test
