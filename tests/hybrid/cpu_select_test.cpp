// Logit mode's CPU selection (issue 15 part 3): cpu_select=fused (score + streaming top-k in
// one pass, the default) and cpu_select=separate (logit array, then top-k) ship the same rows
// and logits, so every step's output and attended set are identical, and the fused output is
// one fp64 softmax over the attended tokens; fused reports its time as cpu.score.
#include <gtest/gtest.h>

#include <cstring>

#include "core/phase_names.h"
#include "kernels/cpu/select.h"
#include "rig.h"

namespace hb::test {
namespace {

void fused_equals_separate(const AttentionShape& shape, int batch, double ratio) {
  const int steps = 20;
  auto tiers = [] {
    return std::vector<HostTier>{tier(MemoryKind::local_dram, 0), tier(MemoryKind::cxl, 1, true)};
  };
  Rig rf(shape, 1003, steps, 2 << 20, tiers(), {}, batch);
  Rig rs(shape, 1003, steps, 2 << 20, tiers(), {}, batch);
  std::map<std::string, std::string> o{{"hybridgen.ratio", std::to_string(ratio)},
                                       {"hybridgen.scheduler", "static"},
                                       {"hybridgen.gpu_tokens", "128"},
                                       {"hybridgen.hot_share", "0.3"},
                                       {"hybridgen.migrate_every", "4"}};
  auto fused = make_hybridgen(o);
  o["hybridgen.cpu_select"] = "separate";
  auto separate = make_hybridgen(o);
  ASSERT_EQ(fused->plan(rf.problem, rf.platform).status, PlanStatus::ok);
  ASSERT_EQ(separate->plan(rs.problem, rs.platform).status, PlanStatus::ok);
  fused->load();
  separate->load();
  const int d = shape.head_dim, H = shape.q_heads;
  for (int s = 0; s < steps; ++s) {
    fused->prepare_step(s);
    separate->prepare_step(s);
    StepResult a, b;
    fused->step(s, a);
    fused->fill_attended(s, a);
    separate->step(s, b);
    separate->fill_attended(s, b);
    ASSERT_EQ(a.attended, b.attended) << "step " << s;
    ASSERT_EQ(std::memcmp(a.o.data(), b.o.data(), a.o.size() * 4), 0) << "step " << s;
    EXPECT_EQ(a.phase_ns[phase::kCpuTopk], 0) << "fused: score and top-k are one phase";
    EXPECT_GT(a.phase_ns[phase::kCpuScore], 0);
    EXPECT_GT(b.phase_ns[phase::kCpuTopk], 0);
    if (a.attended.empty()) continue;
    for (int q = 0; q < batch; ++q)
      for (int qh = 0; qh < H; ++qh) {
        const auto want = rf.attend(q, s, qh, a.attended[static_cast<size_t>(q) * H + qh]);
        EXPECT_LT(rel_err(a.o.data() + (static_cast<size_t>(q) * H + qh) * d, want), 2e-5)
            << "seq " << q << " step " << s << " head " << qh;
      }
  }
  EXPECT_GT(fused->pages_migrated(), 0);  // promotions made the heads' host counts differ
}

TEST(HybridGenCpuSelect, FusedEqualsSeparateGroup7) {
  fused_equals_separate({14, 2, 64, DType::f16}, 1, 0.1);
}
TEST(HybridGenCpuSelect, FusedEqualsSeparateGroup4Batch2) {
  fused_equals_separate({8, 2, 128, DType::f16}, 2, 0.05);
}
TEST(HybridGenCpuSelect, FusedEqualsSeparateGroup1) {
  fused_equals_separate({4, 4, 64, DType::f16}, 1, 0.3);
}

TEST(HybridGenCpuSelect, OptionIsValidated) {
  EXPECT_THROW(make_hybridgen({{"hybridgen.cpu_select", "both"}}), Error);
  auto h = make_hybridgen({{"hybridgen.cpu_select", "separate"}});
  EXPECT_EQ(h->config().cpu_select, hybrid::CpuSelect::separate);
  EXPECT_EQ(make_hybridgen({})->config().cpu_select, hybrid::CpuSelect::fused);
  EXPECT_TRUE(make_hybridgen({})->config().select_hint);
  EXPECT_FALSE(make_hybridgen({{"hybridgen.select_hint", "0"}})->config().select_hint);
  EXPECT_THROW(make_hybridgen({{"hybridgen.hint_margin", "-0.1"}}), Error);
  EXPECT_THROW(make_hybridgen({{"hybridgen.hint_margin", "nan"}}), Error);
}

// The fused selection starts from last step's k-th logit (select_hint): after the first step
// the hinted pass runs, and on this workload its margin holds (few misses, each a sampled pass).
TEST(HybridGenCpuSelect, HintsFromTheLastStepAreUsedAndRarelyMiss) {
  const AttentionShape shape{8, 2, 128, DType::f16};
  Rig rig(shape, 4000, 12, 2 << 20, {tier(MemoryKind::local_dram, 0)});
  auto hg = make_hybridgen({{"hybridgen.ratio", "0.05"},
                            {"hybridgen.scheduler", "static"},
                            {"hybridgen.gpu_tokens", "128"}});
  ASSERT_EQ(hg->plan(rig.problem, rig.platform).status, PlanStatus::ok);
  hg->load();
  const int64_t hinted = cpu::g_select_hinted.load(), misses = cpu::g_select_hint_misses.load();
  const int64_t fallbacks = cpu::g_select_fallbacks.load();
  for (int s = 0; s < 12; ++s) {
    hg->prepare_step(s);
    StepResult out;
    hg->step(s, out);
  }
  EXPECT_EQ(cpu::g_select_hinted.load() - hinted, 11) << "every step after the first";
  EXPECT_LE(cpu::g_select_hint_misses.load() - misses, 2);
  EXPECT_EQ(cpu::g_select_fallbacks.load() - fallbacks, 0);
}

}  // namespace
}  // namespace hb::test
