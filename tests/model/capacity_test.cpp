// Capacity (model/capacity.h) against crafted memories whose edges are computed by hand from
// the strategies' own sizes: a page of qwen2.5-0.5b's KV is 16 tokens x 2 KV heads x 64 x 2 (K
// and V) x 2 bytes = 8 KiB per layer, and one sequence's step rows (q, k, v, o, lse in fp32) are
// 4 x (2 x 14 x 64 + 2 x 2 x 64 + 14) = 8,248 bytes.
#include <gtest/gtest.h>

#include "baselines/register.h"
#include "core/memory.h"
#include "core/model_presets.h"
#include "hybrid/register.h"
#include "model/capacity.h"

namespace hb::model {
namespace {

constexpr int64_t kPage = 8192;      // one page of KV, one layer, one sequence
constexpr int64_t kStepRows = 8248;  // one sequence's step rows
constexpr int kLayers = 24;          // qwen2.5-0.5b

bench::SweepSpec spec() {
  register_baselines(StrategyRegistry::instance());
  register_hybrid(StrategyRegistry::instance());
  bench::SweepSpec s;
  s.models = {"qwen2.5-0.5b"};
  return s;
}

HostTier tier(MemoryKind kind, int node, int64_t per_layer_bytes) {
  const MemoryLocation loc{kind, node, true};
  HostTier t{loc, host_allocator(loc)};
  t.free_bytes = per_layer_bytes * kLayers;
  return t;
}

// A memory whose accelerator holds `acc_per_layer` bytes of KV per layer (whole model: times the
// layers) and the given host tiers.
KvMemory memory(int64_t acc_per_layer, std::vector<HostTier> tiers) {
  return kv_memory("crafted", acc_per_layer, std::move(tiers), find_model_preset("qwen2.5-0.5b"));
}

TEST(Capacity, FullGpuFitsExactlyItsPagesAndNotOneTokenMore) {
  const auto s = spec();
  // 100 pages and one sequence's step rows: 1,600 tokens fit, the 1,601st needs a new page.
  CapacityPlanner p(s, "qwen2.5-0.5b", DType::f16,
                    memory(100 * kPage + kStepRows, {tier(MemoryKind::local_dram, 0, 1 << 30)}));
  EXPECT_TRUE(p.fits("full-gpu", 1600, 1, std::nullopt).ok);
  const auto beyond = p.fits("full-gpu", 1601, 1, std::nullopt);
  EXPECT_FALSE(beyond.ok);
  EXPECT_NE(beyond.reason.find("all KV"), std::string::npos) << beyond.reason;
  const reports::CapacityRow r = p.max_context("full-gpu", 1, std::nullopt);
  EXPECT_EQ(r.kind, reports::CapacityKind::max_context);
  EXPECT_EQ(r.seq_len, 1600);
  EXPECT_FALSE(r.none);
  EXPECT_FALSE(r.unbounded);
  EXPECT_EQ(r.limit.rfind("accelerator: ", 0), 0u) << r.limit;
}

TEST(Capacity, FullGpuLargestBatchAtAContext) {
  const auto s = spec();
  // Three sequences of 100 pages and their step rows: batch 3 fits at 1,600 tokens, 4 does not.
  CapacityPlanner p(
      s, "qwen2.5-0.5b", DType::f16,
      memory(3 * (100 * kPage + kStepRows), {tier(MemoryKind::local_dram, 0, 1 << 30)}));
  const reports::CapacityRow r = p.max_batch("full-gpu", 1600, std::nullopt);
  EXPECT_EQ(r.kind, reports::CapacityKind::max_batch);
  EXPECT_EQ(r.batch, 3);
  EXPECT_EQ(r.seq_len, 1600);
  EXPECT_EQ(p.max_context("full-gpu", 3, std::nullopt).seq_len, 1600);
  EXPECT_EQ(p.max_batch("full-gpu", 1601, std::nullopt).batch,
            2);  // one more page each: 3 x 101 > room
}

TEST(Capacity, OffloadIsBoundByTheFirstHostTier) {
  const auto s = spec();
  // Offload keeps every token on host tier 0 (page-rounded, K and V): 250 pages = 4,000 tokens.
  CapacityPlanner p(s, "qwen2.5-0.5b", DType::f16,
                    memory(64 << 20, {tier(MemoryKind::local_dram, 0, 250 * kPage)}));
  const reports::CapacityRow r = p.max_context("offload", 1, std::nullopt);
  EXPECT_EQ(r.seq_len, 4000);
  EXPECT_EQ(r.limit.rfind("local-dram: ", 0), 0u) << r.limit;
  EXPECT_TRUE(p.fits("offload", 4000, 1, std::nullopt).ok);
  EXPECT_FALSE(p.fits("offload", 4001, 1, std::nullopt).ok);
}

TEST(Capacity, WeightsThatDoNotFitLeaveNoRoomAtAll) {
  const auto s = spec();
  PlatformModel m;
  m.name = "small";
  m.accelerator.name = "tiny GPU";
  m.accelerator.memory_usable_share = 1.0;
  const ModelPreset& qwen = find_model_preset("qwen2.5-0.5b");
  // The layers, the LM head and the embedding table alone fill it.
  m.accelerator.memory_bytes = model_weight_bytes(qwen) + 2 * lm_head_weight_bytes(qwen);
  m.tiers.push_back({MemoryKind::local_dram, 0, "DRAM", int64_t{1} << 36, 100, 100, false});
  const KvMemory mem = kv_memory(m, qwen);
  EXPECT_EQ(mem.accelerator_kv_bytes, 0);
  CapacityPlanner p(s, "qwen2.5-0.5b", DType::f16, mem);
  for (const char* strategy : {"full-gpu", "offload", "hybridgen"}) {
    const reports::CapacityRow r = p.max_context(strategy, 1, std::nullopt);
    EXPECT_TRUE(r.none) << strategy;
    EXPECT_EQ(r.value(), 0) << strategy;
    EXPECT_EQ(r.limit.rfind("weights: ", 0), 0u) << r.limit;
  }
  // Room for one page and one sequence's step rows per layer beyond the weights: 16 tokens.
  m.accelerator.memory_bytes += int64_t{kLayers} * (kPage + kStepRows);
  EXPECT_EQ(CapacityPlanner(s, "qwen2.5-0.5b", DType::f16, kv_memory(m, qwen))
                .max_context("full-gpu", 1, std::nullopt)
                .seq_len,
            16);
}

TEST(Capacity, HybridGenUsesTheCxlTierAndItsAnswerIsItsPlansEdge) {
  const auto s = spec();
  const int64_t acc = 32 * kPage, dram = 400 * kPage, cxl = 400 * kPage;
  CapacityPlanner without(s, "qwen2.5-0.5b", DType::f16,
                          memory(acc, {tier(MemoryKind::local_dram, 0, dram)}));
  CapacityPlanner with(
      s, "qwen2.5-0.5b", DType::f16,
      memory(acc, {tier(MemoryKind::local_dram, 0, dram), tier(MemoryKind::cxl, 2, cxl)}));
  const auto a = without.max_context("hybridgen", 1, std::nullopt);
  const auto b = with.max_context("hybridgen", 1, std::nullopt);
  // Without a far tier K and V share DRAM; with one V moves to CXL: more context.
  EXPECT_GT(b.seq_len, a.seq_len);
  for (auto* p : {&without, &with}) {
    const auto r = p->max_context("hybridgen", 1, std::nullopt);
    EXPECT_TRUE(p->fits("hybridgen", r.seq_len, 1, std::nullopt).ok);
    EXPECT_FALSE(p->fits("hybridgen", r.seq_len + 1, 1, std::nullopt).ok);
  }
  // Its host side must hold all but the smallest window (the boundary may move there), so
  // DRAM binds without a CXL tier.
  EXPECT_NE(a.limit.find("local-dram"), std::string::npos) << a.limit;
}

TEST(Capacity, AFixedBudgetThatEvictsIsUnbounded) {
  auto s = spec();
  // StreamingLLM with a fixed window keeps 68 tokens whatever the context (on a model that
  // names no position limit: the preset's would cap the search, as the next test shows).
  s.strategy_options["streamingllm.window"] = "64";
  ModelPreset model = find_model_preset("qwen2.5-0.5b");
  model.name = "qwen-unlimited";
  model.max_context = 0;
  s.own_models = {model};
  s.models = {model.name};
  CapacityPlanner p(
      s, model.name, DType::f16,
      kv_memory("crafted", 1 << 20, {tier(MemoryKind::local_dram, 0, 1 << 20)}, model));
  const auto r = p.max_context("streamingllm", 1, std::nullopt);
  EXPECT_TRUE(r.unbounded);
  EXPECT_EQ(r.seq_len, CapacityPlanner::kMaxContextSearched);
}

// A model attends no further than the positions it was trained for: memory that would hold
// more (3.20M tokens of host DRAM for a 131k model) is not context it can use.
TEST(Capacity, TheModelsOwnContextLimitCapsMaxContext) {
  auto s = spec();
  ModelPreset model = find_model_preset("qwen2.5-0.5b");
  model.name = "qwen-4k";
  model.max_context = 4096;
  s.own_models = {model};
  s.models = {"qwen-4k"};
  // Offload's host tier holds 4,000 tokens: memory binds below the model's limit...
  CapacityPlanner tight(
      s, "qwen-4k", DType::f16,
      kv_memory("crafted", 64 << 20, {tier(MemoryKind::local_dram, 0, 250 * kPage)}, model));
  EXPECT_EQ(tight.max_context("offload", 1, std::nullopt).seq_len, 4000);
  // ...and with room for 40,000 the answer is the model's 4,096, bound by the model.
  CapacityPlanner roomy(
      s, "qwen-4k", DType::f16,
      kv_memory("crafted", 64 << 20, {tier(MemoryKind::local_dram, 0, 2500 * kPage)}, model));
  const auto r = roomy.max_context("offload", 1, std::nullopt);
  EXPECT_EQ(r.seq_len, 4096);
  EXPECT_FALSE(r.unbounded);
  EXPECT_FALSE(r.none);
  EXPECT_EQ(r.limit.rfind("model: ", 0), 0u) << r.limit;
  EXPECT_NE(r.limit.find("max_position_embeddings"), std::string::npos) << r.limit;
}

TEST(Capacity, SweepCapacityGivesARowPerStrategyBatchAndLength) {
  auto s = spec();
  s.strategies = {"full-gpu", "cpu-only"};
  s.batches = {1, 4};
  s.seq_lens = {1024, 2048};
  const auto rows = sweep_capacity(s, [](const std::string&, const ModelPreset& p) {
    return kv_memory("crafted", 1 << 20, {tier(MemoryKind::local_dram, 0, 1 << 22)}, p);
  });
  // Per strategy: two batches (max context) and two lengths (max batch).
  ASSERT_EQ(rows.size(), 8u);
  for (const auto& r : rows) {
    EXPECT_EQ(r.platform, "crafted");
    EXPECT_EQ(r.model, "qwen2.5-0.5b");
    EXPECT_EQ(r.kv_dtype, "fp16");
  }
}

}  // namespace
}  // namespace hb::model
