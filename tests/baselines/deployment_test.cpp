// Deployments (baselines/README.md, "Deployment"): a strategy whose paper describes an
// offloading deployment takes it when its all-resident plan does not fit the accelerator budget
// (quest.offload=auto, h2o.offload, streamingllm.offload), sizes what it keeps on the accelerator
// to that budget, and attends what the resident plan would: same tokens, same accuracy against
// the fp64 reference.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/phase_names.h"
#include "tests/baselines/harness.h"

namespace hb::test {
namespace {

struct Ran {
  PlanResult plan;
  std::vector<StepResult> steps;
  std::vector<double> dense_error;  // per step: rel. L2 against dense fp64 attention
};

// Plans `name` on a fresh qwen2.5-0.5b harness (14 query heads, 2 KV heads, d = 64, fp16) with
// `capacity` bytes of accelerator memory and, when the plan is ok, runs every decode step.
Ran run(WorkloadSpec::Kind kind, int64_t capacity, const std::string& name,
        std::map<std::string, std::string> opts) {
  Harness h("qwen2.5-0.5b", 2000, 4, 1, kind, capacity);
  auto s = h.make(name, std::move(opts));
  Ran r;
  r.plan = s->plan(h.problem, h.platform);
  if (r.plan.status != PlanStatus::ok) return r;
  s->load();
  for (int i = 0; i < h.problem.decode_steps(); ++i) {
    StepResult out = Harness::run_step(*s, i);
    EXPECT_LT(h.max_error_vs_attended(i, out), 2e-4) << name << " step " << i;
    // Against dense fp64 attention over the whole context (attended cleared: all of it).
    StepResult dense = out;
    dense.attended.clear();
    r.dense_error.push_back(h.max_error_vs_attended(i, dense));
    r.steps.push_back(std::move(out));
  }
  return r;
}

std::vector<std::vector<int64_t>> sorted_attended(const StepResult& out) {
  auto a = out.attended;
  for (auto& v : a) std::sort(v.begin(), v.end());
  return a;
}

// The offloaded run attends exactly the resident run's tokens, and its error against dense fp64
// attention is the same (the same pages through the same kernel: equal to 1e-9).
void expect_same_accuracy(const Ran& offloaded, const Ran& resident) {
  ASSERT_EQ(offloaded.steps.size(), resident.steps.size());
  for (size_t s = 0; s < resident.steps.size(); ++s) {
    EXPECT_EQ(sorted_attended(offloaded.steps[s]), sorted_attended(resident.steps[s]))
        << "step " << s;
    EXPECT_GT(resident.dense_error[s], 1e-4) << "step " << s;  // it does select
    EXPECT_NEAR(offloaded.dense_error[s], resident.dense_error[s], 1e-9) << "step " << s;
    const auto& a = offloaded.steps[s].o;
    const auto& b = resident.steps[s].o;
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], 1e-6) << "step " << s;
  }
}

// Quest, budget 128 tokens = 8 pages per query head. All-resident needs ~1 MiB of KV plus 91 KiB
// of page bounds and scratch; 200 KiB leaves room for 24 landing pages (less 1/16 kept for
// kernel scratch) where a step may need a KV head's union of 7 x 8 pages: steps land in rounds.
constexpr int64_t kBig = 64 << 20, kSmall = 200 * 1024;
const std::map<std::string, std::string> kQuest128 = {{"quest.budget", "128"}};

TEST(Deployment, QuestAutoStaysResidentWhenItFits) {
  const Ran r = run(WorkloadSpec::Kind::structured, kBig, "quest", kQuest128);
  ASSERT_EQ(r.plan.status, PlanStatus::ok) << r.plan.reason;
  EXPECT_EQ(r.plan.parameters.at("deployment"), "resident");
  EXPECT_NE(r.plan.parameters.at("deployment_reason").find("fits"), std::string::npos);
  for (const auto& out : r.steps) EXPECT_EQ(out.traffic.h2d_bytes, 0);
}

TEST(Deployment, QuestAutoOffloadsWhereResidentDoesNotFitWithTheSameAccuracy) {
  const Ran resident = run(WorkloadSpec::Kind::structured, kBig, "quest", kQuest128);
  const Ran off = run(WorkloadSpec::Kind::structured, kSmall, "quest", kQuest128);
  ASSERT_EQ(off.plan.status, PlanStatus::ok) << off.plan.reason;
  EXPECT_EQ(off.plan.parameters.at("deployment"), "offloaded");
  EXPECT_NE(off.plan.parameters.at("deployment_reason").find("all-resident needs"),
            std::string::npos);
  EXPECT_EQ(off.plan.parameters.at("budget_pages"), "8");  // Quest's own budget, not lowered
  EXPECT_EQ(off.plan.parameters.at("landing_pages").substr(0, 22), "24 of a worst case 112");
  EXPECT_TRUE(off.plan.warnings.empty());
  int64_t rounds_above_one = 0;
  for (const auto& out : off.steps) {
    EXPECT_GT(out.traffic.h2d_bytes, 0);
    rounds_above_one += out.traffic.kernel_launches > 4;  // fold, bounds, top-k + 1 per round
  }
  EXPECT_GT(rounds_above_one, 0);  // the landing pages are smaller than a step's unions
  expect_same_accuracy(off, resident);
}

TEST(Deployment, QuestOffloadZeroStaysResidentAndNamesTheFix) {
  auto opts = kQuest128;
  opts["quest.offload"] = "0";
  const Ran r = run(WorkloadSpec::Kind::structured, kSmall, "quest", opts);
  EXPECT_EQ(r.plan.status, PlanStatus::oom);
  EXPECT_EQ(r.plan.parameters.at("deployment"), "resident");
  EXPECT_NE(r.plan.reason.find("quest.offload=auto or 1"), std::string::npos) << r.plan.reason;
  // quest.offload=1 offloads even where all-resident fits.
  opts["quest.offload"] = "1";
  EXPECT_EQ(
      run(WorkloadSpec::Kind::structured, kBig, "quest", opts).plan.parameters.at("deployment"),
      "offloaded");
}

TEST(Deployment, QuestLowersItsPagesOnlyWhenOneHeadsPagesDoNotFit) {
  // 121000 bytes: 5 landing pages next to the 91 KiB of bounds, fewer than 8: lowered, warned.
  const Ran low = run(WorkloadSpec::Kind::structured, 121000, "quest", kQuest128);
  ASSERT_EQ(low.plan.status, PlanStatus::ok) << low.plan.reason;
  EXPECT_EQ(low.plan.parameters.at("budget_pages"), "5");
  ASSERT_EQ(low.plan.warnings.size(), 1u);
  EXPECT_NE(low.plan.warnings[0].find("lowered to 5"), std::string::npos);
  for (const auto& out : low.steps)
    for (const auto& a : out.attended) EXPECT_LE(a.size(), 5u * 16);
  // 107000 bytes: one landing page, below quest.min_pages (3): oom, naming the option.
  const Ran none = run(WorkloadSpec::Kind::structured, 107000, "quest", kQuest128);
  EXPECT_EQ(none.plan.status, PlanStatus::oom);
  EXPECT_NE(none.plan.reason.find("quest.min_pages"), std::string::npos) << none.plan.reason;
}

// H2O and StreamingLLM keep 20% of the 2000-token prompt (401 and 400 tokens: ~210 KiB of fp16
// KV, plus H2O's scores); 64 KiB holds the step's rows but not those. Offloaded, the CPU attends
// the kept tokens in host memory (H2O's FlexGen port, cpu_cache_compute): the same tokens, the
// same victims, the same output as the resident run, and no KV crosses the link.
constexpr int64_t kNoRoomForTheKeptTokens = 64 * 1024;

class PruningDeployment : public ::testing::TestWithParam<std::string> {};

TEST_P(PruningDeployment, AutoStaysResidentWhereTheKeptTokensFit) {
  const Ran r = run(WorkloadSpec::Kind::structured, kBig, GetParam(), {});
  ASSERT_EQ(r.plan.status, PlanStatus::ok) << r.plan.reason;
  EXPECT_EQ(r.plan.parameters.at("deployment"), "resident");
  for (const auto& out : r.steps) {
    EXPECT_EQ(out.traffic.h2d_bytes, 0);
    EXPECT_EQ(out.traffic.cpu_flops, 0);
  }
}

TEST_P(PruningDeployment, AutoOffloadsWhereTheyDoNotFitWithTheSameTokensAndOutput) {
  const Ran resident = run(WorkloadSpec::Kind::structured, kBig, GetParam(), {});
  const Ran off = run(WorkloadSpec::Kind::structured, kNoRoomForTheKeptTokens, GetParam(), {});
  ASSERT_EQ(off.plan.status, PlanStatus::ok) << off.plan.reason;
  EXPECT_EQ(off.plan.parameters.at("deployment"), "offloaded");
  EXPECT_NE(off.plan.parameters.at("deployment_reason").find("all-resident needs"),
            std::string::npos);
  EXPECT_EQ(off.plan.parameters.at("budget_tokens"), resident.plan.parameters.at("budget_tokens"));
  EXPECT_NE(off.plan.parameters.at("attended_by").find("cpu"), std::string::npos);
  for (const auto& out : off.steps) {
    EXPECT_GT(out.traffic.cpu_flops, 0);
    EXPECT_EQ(out.traffic.accelerator_flops, 0);
    // q and the new k, v down, the output up: a few KiB, never the kept KV (~210 KiB).
    EXPECT_GT(out.traffic.d2h_bytes, 0);
    EXPECT_LT(out.traffic.d2h_bytes + out.traffic.h2d_bytes, 16 * 1024);
    EXPECT_GT(out.phase_ns.count(phase::kCpu), 0u);
  }
  expect_same_accuracy(off, resident);
}

TEST_P(PruningDeployment, OffloadZeroIsOomAndNamesTheOption) {
  const std::string name = GetParam();
  const Ran r = run(WorkloadSpec::Kind::structured, kNoRoomForTheKeptTokens, name,
                    {{name + ".offload", "0"}});
  EXPECT_EQ(r.plan.status, PlanStatus::oom);
  EXPECT_EQ(r.plan.parameters.at("deployment"), "resident");
  EXPECT_NE(r.plan.reason.find(name + ".offload=auto or 1"), std::string::npos) << r.plan.reason;
  // offload=1 offloads even where the kept tokens fit.
  EXPECT_EQ(run(WorkloadSpec::Kind::structured, kBig, name, {{name + ".offload", "1"}})
                .plan.parameters.at("deployment"),
            "offloaded");
}

INSTANTIATE_TEST_SUITE_P(Baselines, PruningDeployment, ::testing::Values("h2o", "streamingllm"),
                         [](const auto& info) { return info.param; });

// InfiniGen is offloaded by design. At 64 MiB its fetch buffers hold the cap of 20% of the
// context (401 tokens); at 400 KiB they do not (~700 KiB): the cap is lowered to what fits,
// still above the handful of tokens the needle workload's alpha rule fetches, so the points
// attend the same tokens with the same accuracy.
TEST(Deployment, InfiniGenCapsItsFetchToTheBudgetWithTheSameAccuracy) {
  const Ran full = run(WorkloadSpec::Kind::needle, kBig, "infinigen", {});
  ASSERT_EQ(full.plan.status, PlanStatus::ok) << full.plan.reason;
  EXPECT_EQ(full.plan.parameters.at("deployment"), "offloaded");
  EXPECT_EQ(full.plan.parameters.count("fetch_cap"), 0u);
  EXPECT_TRUE(full.plan.warnings.empty());
  const Ran capped = run(WorkloadSpec::Kind::needle, 400 * 1024, "infinigen", {});
  ASSERT_EQ(capped.plan.status, PlanStatus::ok) << capped.plan.reason;
  EXPECT_EQ(capped.plan.parameters.at("deployment"), "offloaded");
  const int64_t cap = std::stoll(capped.plan.parameters.at("fetch_cap"));
  EXPECT_LT(cap, 401);
  ASSERT_EQ(capped.plan.warnings.size(), 1u);
  EXPECT_NE(capped.plan.warnings[0].find("lowered to"), std::string::npos);
  for (const auto& out : capped.steps)
    EXPECT_LT(static_cast<int64_t>(out.attended[0].size()), cap);  // the cap did not bind
  expect_same_accuracy(capped, full);
  // infinigen.fit_fetch=0 keeps the cap and declines, naming the option that fits it.
  const Ran strict =
      run(WorkloadSpec::Kind::needle, 400 * 1024, "infinigen", {{"infinigen.fit_fetch", "0"}});
  EXPECT_EQ(strict.plan.status, PlanStatus::oom);
  EXPECT_NE(strict.plan.reason.find("infinigen.fit_fetch=1"), std::string::npos)
      << strict.plan.reason;
}

}  // namespace
}  // namespace hb::test
