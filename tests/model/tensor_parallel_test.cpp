// Tensor parallelism and fp8 in model mode (model/tensor_parallel.h): one rank's weights, KV
// and traffic, the all-reduces and the per-rank budget against hand-computed values, --tp auto
// choosing the smallest tp that holds the weights and the KV, refused --tp values, and the
// --precision parser.
#include "model/tensor_parallel.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace hb::model {
namespace {

constexpr int kAcc = static_cast<int>(Processor::accelerator);
constexpr int kCpu = static_cast<int>(Processor::cpu);
constexpr int kHbm = static_cast<int>(MemoryKind::accelerator);
constexpr int kDram = static_cast<int>(MemoryKind::local_dram);

// llama-3.1-70b, one layer at fp16: QKV 8192 x (64 + 2 x 8) x 128, out 64 x 128 x 8192, FFN
// 3 x 8192 x 28672 elements, x 2 bytes; its K and V projections 2 x 8192 x 8 x 128 x 2 bytes.
constexpr double kLayer70b = (8192.0 * 80 * 128 + 64.0 * 128 * 8192 + 3.0 * 8192 * 28672) * 2;
constexpr double kLmHead70b = 8192.0 * 128256 * 2;

const ModelPreset& llama70b() { return find_model_preset("llama-3.1-70b"); }

TEST(TensorParallel, RankWeightsOfLlama70bByHand) {
  EXPECT_DOUBLE_EQ(kLayer70b, 1711276032.0);
  // tp 4 splits every matrix (8 KV heads over 4 ranks), LM head and embedding vocab-parallel.
  EXPECT_DOUBLE_EQ(rank_weight_bytes(llama70b(), 4, PricedDtype::fp16),
                   (80 * kLayer70b + 2 * kLmHead70b) / 4);
  // fp8: one byte per weight.
  EXPECT_DOUBLE_EQ(rank_weight_bytes(llama70b(), 4, PricedDtype::fp8),
                   (80 * kLayer70b + 2 * kLmHead70b) / 8);
  // qwen2.5-3b: 2 KV heads, tp 4 replicates them (vLLM): each rank holds one KV head's K and V
  // projections, 1/2 of them, and 1/4 of everything else.
  const ModelPreset& q = find_model_preset("qwen2.5-3b");
  const double kv = 2.0 * 2048 * 2 * 128 * 2;
  const double layer = static_cast<double>(layer_weight_bytes(q));
  const double lm = 2.0 * static_cast<double>(lm_head_weight_bytes(q));
  EXPECT_DOUBLE_EQ(rank_weight_bytes(q, 4, PricedDtype::fp16),
                   36 * ((layer - kv) / 4 + kv / 2) + lm / 4);
}

TEST(TensorParallel, OneLayerOnFourH100RanksByHand) {
  const PlatformModel h100 = load_platform_model("preset:h100-pcie5-cxl0");
  ASSERT_EQ(h100.node.gpus, 8);
  const Deployment d = choose_deployment(h100, llama70b(), 1024, 8, {4});
  EXPECT_EQ(d.tp, 4);
  EXPECT_EQ(d.kv_split, 4);
  EXPECT_DOUBLE_EQ(d.weight_share, 0.25);
  // A layer step: its weights and 1 GB of KV from HBM, 1 MB written, 4 GFLOP, 1 MB copied up,
  // 2 MB the host reads from DRAM, 12 launches, 2 syncs.
  Traffic t;
  t.weight_bytes = static_cast<int64_t>(kLayer70b);
  t.read(Processor::accelerator, MemoryKind::accelerator, t.weight_bytes + 1000000000);
  t.write(Processor::accelerator, MemoryKind::accelerator, 1000000);
  t.read(Processor::cpu, MemoryKind::local_dram, 2000000);
  t.accelerator_flops = 4e9;
  t.h2d_bytes = 1000000;
  t.kernel_launches = 12;
  t.syncs = 2;
  const Traffic r = rank_traffic(t, d);
  EXPECT_EQ(r.weight_bytes, 427819008);  // 1,711,276,032 / 4
  EXPECT_EQ(r.bytes_read[kAcc][kHbm], 427819008 + 250000000);
  EXPECT_EQ(r.bytes_written[kAcc][kHbm], 250000);
  EXPECT_DOUBLE_EQ(r.accelerator_flops, 1e9);
  EXPECT_EQ(r.h2d_bytes, 250000);
  EXPECT_EQ(r.bytes_read[kCpu][kDram], 2000000);  // the host serves every rank: not split
  EXPECT_EQ(r.kernel_launches, 12);               // every rank launches them
  EXPECT_EQ(r.syncs, 2);
  // Two ring all-reduces of 8 x 8192 fp16 rows on NVLink 4 (450 GB/s per direction, 0.6 us a
  // step): 2 x (2 x 3/4 x 131,072 B / 450 B/ns + 6 x 600 ns).
  EXPECT_NEAR(layer_allreduce_ns(h100.node, 4, 8, 8192), 2 * (1.5 * 131072 / 450.0 + 3600), 1e-6);
  EXPECT_DOUBLE_EQ(allreduce_ns(h100.node, 1, 131072), 0);
  // The executed (fp16, every head) layer's budget: 4 ranks' room after their layers' weights.
  const double usable = 85899345920.0 * 0.9;
  EXPECT_NEAR(static_cast<double>(executed_kv_budget_per_layer(h100, llama70b(), d)),
              4 * (usable - 80 * kLayer70b / 4) / 80, 4);
}

TEST(TensorParallel, Fp8HalvesWeightAndKvBytes) {
  const PlatformModel gh200 = load_platform_model("preset:gh200-c2c");
  const Deployment d =
      choose_deployment(gh200, llama70b(), 1024, 1, {0, PricedDtype::fp8, PricedDtype::fp8});
  EXPECT_EQ(d.tp, 1);
  EXPECT_TRUE(d.refused.empty()) << d.refused;  // 70B in fp8 fits one GH200; in fp16 it does not
  EXPECT_FALSE(choose_deployment(gh200, llama70b(), 1024, 1, {}).refused.empty());
  EXPECT_DOUBLE_EQ(d.kv_scale(), 0.5);
  Traffic t;
  t.weight_bytes = 1000;
  t.read(Processor::accelerator, MemoryKind::accelerator, 1000 + 4000);
  t.read(Processor::cpu, MemoryKind::local_dram, 600);
  t.d2h_bytes = 80;
  const Traffic r = rank_traffic(t, d);
  EXPECT_EQ(r.weight_bytes, 500);
  EXPECT_EQ(r.bytes_read[kAcc][kHbm], 500 + 2000);
  EXPECT_EQ(r.bytes_read[kCpu][kDram], 300);
  EXPECT_EQ(r.d2h_bytes, 40);
  // fp8 KV: the executed fp16 budget is twice the room.
  const double usable = 96000000000.0 * 0.9;
  EXPECT_NEAR(static_cast<double>(executed_kv_budget_per_layer(gh200, llama70b(), d)),
              2 * (usable - 80 * kLayer70b / 2) / 80, 2);
}

TEST(TensorParallel, AutoTakesTheSmallestTpThatHoldsWeightsAndKv) {
  const PlatformModel h100 = load_platform_model("preset:h100-pcie5-cxl0");
  const double usable = 85899345920.0 * 0.9;       // 77.3 GB
  const double kv_token = 80.0 * 2 * 8 * 128 * 2;  // 327,680 B a token over the layers
  // tp 1 cannot hold 141 GB of weights; tp 2 holds them (70.6 GB) and one 32k sequence's KV
  // (10.7 GB / 2); eight sequences need tp 4.
  EXPECT_LT(usable - (80 * kLayer70b + 2 * kLmHead70b) / 2, 8 * 32768 * kv_token / 2);
  EXPECT_EQ(choose_deployment(h100, llama70b(), 32768, 1, {}).tp, 2);
  EXPECT_EQ(choose_deployment(h100, llama70b(), 32768, 8, {}).tp, 4);
  EXPECT_EQ(choose_deployment(h100, llama70b(), 131072, 8, {}).tp, 8);
  // No tp holds 8 x 1M tokens: the largest whose weights fit, so the offloaders have the most HBM.
  const Deployment none = choose_deployment(h100, llama70b(), 1 << 20, 8, {});
  EXPECT_EQ(none.tp, 8);
  EXPECT_NE(none.choice.find("no tp holds"), std::string::npos);
  // A model that fits one GPU stays on one: the single-GPU figures are unchanged.
  EXPECT_EQ(choose_deployment(h100, find_model_preset("llama-3.1-8b"), 16384, 1, {}).tp, 1);
  // fp8 weights and KV: 70.6 GB fit one H100 with 5 GB of KV room.
  EXPECT_EQ(
      choose_deployment(h100, llama70b(), 4096, 1, {0, PricedDtype::fp8, PricedDtype::fp8}).tp, 1);
  // A one-GPU platform has only tp 1.
  const PlatformModel rtx = load_platform_model("preset:rtx4090");
  EXPECT_EQ(choose_deployment(rtx, llama70b(), 1024, 1, {}).tp, 1);
}

TEST(TensorParallel, ImpossibleTpIsRefused) {
  const PlatformModel h100 = load_platform_model("preset:h100-pcie5-cxl0");
  EXPECT_NE(tp_problem(h100, llama70b(), 16).find("exceeds"), std::string::npos);
  EXPECT_NE(tp_problem(h100, llama70b(), 3).find("does not divide"), std::string::npos);
  EXPECT_THROW(choose_deployment(h100, llama70b(), 1024, 1, {16}), Error);
  // qwen2.5-7b's 28 query heads do not split over 8 ranks.
  EXPECT_NE(tp_problem(h100, find_model_preset("qwen2.5-7b"), 8).find("query heads"),
            std::string::npos);
  // 8 KV heads neither divide 5 ranks nor are divided by them (a 10-GPU node).
  PlatformModel ten = h100;
  ten.node.gpus = 10;
  EXPECT_NE(tp_problem(ten, find_model_preset("qwen2.5-14b"), 5).find("KV heads"),
            std::string::npos);
  // Fewer KV heads than ranks, dividing them: replicated (qwen2.5-3b's 2 over 4 ranks).
  EXPECT_EQ(tp_problem(h100, find_model_preset("qwen2.5-3b"), 4), "");
  EXPECT_EQ(choose_deployment(h100, find_model_preset("qwen2.5-3b"), 1024, 1, {4}).kv_split, 2);
}

TEST(TensorParallel, DeploymentOptionsParse) {
  const auto r = parse_deployments("auto", "fp16,fp8,fp8-weights");
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].tp, 0);
  EXPECT_EQ(r[1].weights, PricedDtype::fp8);
  EXPECT_EQ(r[1].kv, PricedDtype::fp8);
  EXPECT_EQ(r[2].weights, PricedDtype::fp8);
  EXPECT_EQ(r[2].kv, PricedDtype::fp16);
  EXPECT_EQ(parse_deployments("4", "fp16")[0].tp, 4);
  for (const char* bad : {"0", "four", "2x", ""})
    EXPECT_THROW(parse_deployments(bad, "fp16"), Error);
  EXPECT_THROW(parse_deployments("auto", "int4"), Error);
}

}  // namespace
}  // namespace hb::model
