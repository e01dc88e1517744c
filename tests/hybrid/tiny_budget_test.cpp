// HybridGen and its ablations at the smallest --kv-budget: with budget 1 the resident window
// (one page) already holds the budget, so no row is shipped and the shipped-row buffers have size
// 0. Each step then attends the resident tokens alone, exactly (fp64 reference over what it says
// it attended). Before, gather_shipped_rows wrote into those empty buffers: a segfault.
#include <string>

#include <gtest/gtest.h>

#include "hybrid/register.h"
#include "tests/baselines/harness.h"

namespace hb::test {
namespace {

TEST(HybridGenTinyBudget, RunsExactlyOverWhatItAttends) {
  register_hybrid(StrategyRegistry::instance());
  for (const int64_t budget : {1, 2, 16, 17}) {
    for (const char* name : {"hybridgen", "hybridgen-lse", "hybridgen-static", "hybridgen-naive",
                             "hybridgen-serial"}) {
      SCOPED_TRACE(std::string(name) + " at --kv-budget " + std::to_string(budget));
      Harness h("qwen2.5-0.5b", 1000, 4, 2, WorkloadSpec::Kind::structured);
      h.problem.kv_budget_tokens = budget;
      auto s = h.make(name);
      const PlanResult plan = s->plan(h.problem, h.platform);
      ASSERT_EQ(plan.status, PlanStatus::ok) << plan.reason;
      s->load();
      for (int i = 0; i < h.problem.decode_steps(); ++i) {
        const StepResult out = Harness::run_step(*s, i);
        EXPECT_LT(h.max_error_vs_attended(i, out), 2e-4) << "step " << i;
        if (out.attended.empty()) continue;  // lse merges every host token exactly
        const int64_t ctx = h.problem.context_at(i);
        for (const auto& a : out.attended) {
          ASSERT_FALSE(a.empty());
          EXPECT_NE(std::find(a.begin(), a.end(), ctx - 1), a.end()) << "the new token";
          // The budget, or the one resident page when the budget is smaller than a page.
          EXPECT_LE(static_cast<int64_t>(a.size()), std::max<int64_t>(budget, 16));
        }
      }
    }
  }
}

}  // namespace
}  // namespace hb::test
