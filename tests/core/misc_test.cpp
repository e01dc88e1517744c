#include <atomic>
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/model_presets.h"
#include "core/stats.h"
#include "core/strategy.h"
#include "core/thread_pool.h"
#include "core/traffic.h"

namespace hb {
namespace {

TEST(ModelPresets, PublicConfigsAndLookup) {
  const auto& l = find_model_preset("Llama-3.1-8B");
  EXPECT_EQ(l.shape.q_heads, 32);
  EXPECT_EQ(l.shape.kv_heads, 8);
  EXPECT_EQ(l.shape.head_dim, 128);
  EXPECT_EQ(l.shape.kv_bytes_per_token(),
            4096);  // 4 KiB per token per layer: 2 (K,V) x 8 kv heads x 128 x 2 bytes
  EXPECT_EQ(find_model_preset("opt-13b").layers, 40);
  EXPECT_EQ(find_model_preset("qwen2.5-7b").shape.kv_heads, 4);
  for (const auto& p : model_presets()) {
    EXPECT_NO_THROW(p.shape.validate()) << p.name;
    EXPECT_EQ(p.shape.q_heads * p.shape.head_dim, p.hidden) << p.name;
  }
  try {
    find_model_preset("gpt-5");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(e.fix().find("llama-3.1-8b"), std::string::npos);
  }
}

TEST(Stats, QuantilesAndNoise) {
  std::vector<double> s = {5, 1, 4, 2, 3};
  auto r = summarize(s);
  EXPECT_EQ(r.median, 3);
  EXPECT_EQ(r.min, 1);
  EXPECT_EQ(r.max, 5);
  EXPECT_DOUBLE_EQ(r.q1, 2);
  EXPECT_DOUBLE_EQ(r.p10, 1.4);
  EXPECT_NEAR(r.stdev, std::sqrt(2.5), 1e-12);
  EXPECT_TRUE(std::isnan(quantile(std::vector<double>{}, 0.5)));
  EXPECT_EQ(summarize(std::vector<double>{}).count, 0);
}

TEST(ThreadPool, RunsEveryTaskOnceRepeatedly) {
  ThreadPool pool(3);
  for (int round = 0; round < 200; ++round) {
    std::vector<std::atomic<int>> hits(97);
    pool.parallel_for(97, [&](int64_t t, int worker) {
      ASSERT_GE(worker, 0);
      ASSERT_LT(worker, 3);
      hits[t]++;
    });
    for (auto& h : hits) ASSERT_EQ(h.load(), 1);
  }
  pool.parallel_for(0, [](int64_t, int) { FAIL(); });
}

// A parallel_for from inside one of the same pool's tasks (a strategy's load using the global
// pool from code that may itself run as a task) runs inline on that worker: every task of both
// levels runs once, and the outer call is not clobbered.
TEST(ThreadPool, NestedCallRunsInlineOnTheWorker) {
  ThreadPool pool(2);
  ThreadPool other(2);
  for (int round = 0; round < 50; ++round) {
    std::vector<std::atomic<int>> outer(7), inner(7 * 13), elsewhere(7 * 5);
    pool.parallel_for(7, [&](int64_t t, int worker) {
      outer[t]++;
      pool.parallel_for(13, [&](int64_t u, int inner_worker) {
        ASSERT_EQ(inner_worker, 0);  // inline: the nested call's only worker
        inner[t * 13 + u]++;
      });
      (void)worker;
    });
    for (auto& h : outer) ASSERT_EQ(h.load(), 1);
    for (auto& h : inner) ASSERT_EQ(h.load(), 1);
    // Another pool's call from a task is not nested in it: it runs on that pool as usual.
    pool.parallel_for(7, [&](int64_t t, int) {
      if (t == 0) other.parallel_for(35, [&](int64_t u, int) { elsewhere[u]++; });
    });
    for (auto& h : elsewhere) ASSERT_EQ(h.load(), 1);
  }
}

TEST(Traffic, AccumulatesAndScales) {
  Traffic a;
  a.read(Processor::cpu, MemoryKind::cxl, 100);
  a.h2d_bytes = 10;
  a.weight_bytes = 40;
  Traffic b = a;
  b += a;
  EXPECT_EQ(b.bytes_read[0][int(MemoryKind::cxl)], 200);
  EXPECT_EQ(b.weight_bytes, 80);
  EXPECT_EQ(b.scaled(0.5), a);
  EXPECT_EQ(b.total_read(Processor::cpu), 200);
}

TEST(Traffic, ForBatchScalesWhatEachSequenceMovesAndKeepsTheWeightsOnce) {
  Traffic one;
  one.read(Processor::accelerator, MemoryKind::accelerator, 1000 + 300);  // 1000 of weights
  one.weight_bytes = 1000;
  one.read(Processor::cpu, MemoryKind::local_dram, 70);
  one.write(Processor::accelerator, MemoryKind::accelerator, 5);
  one.h2d_bytes = 11;
  one.d2h_bytes = 3;
  one.cpu_flops = 2.5;
  one.accelerator_flops = 40;
  one.select(Processor::cpu, 9);
  one.kernel_launches = 7;
  one.syncs = 2;
  const Traffic b8 = one.for_batch(8);
  EXPECT_EQ(b8.bytes_read[1][int(MemoryKind::accelerator)], 1000 + 8 * 300);
  EXPECT_EQ(b8.weight_bytes, 1000);
  EXPECT_EQ(b8.bytes_read[0][int(MemoryKind::local_dram)], 560);
  EXPECT_EQ(b8.bytes_written[1][int(MemoryKind::accelerator)], 40);
  EXPECT_EQ(b8.h2d_bytes, 88);
  EXPECT_EQ(b8.d2h_bytes, 24);
  EXPECT_DOUBLE_EQ(b8.cpu_flops, 20);
  EXPECT_DOUBLE_EQ(b8.accelerator_flops, 320);
  EXPECT_DOUBLE_EQ(b8.select_elements[0], 72);
  EXPECT_EQ(b8.kernel_launches, 7);  // a batched kernel is one launch
  EXPECT_EQ(b8.syncs, 2);
  EXPECT_EQ(one.for_batch(1), one);
  // In two micro-batches each one launches its kernels and reads the weights again.
  const Traffic two = one.for_batch(8, 2);
  EXPECT_EQ(two.weight_bytes, 2000);
  EXPECT_EQ(two.bytes_read[1][int(MemoryKind::accelerator)], 2000 + 8 * 300);
  EXPECT_EQ(two.kernel_launches, 14);
  EXPECT_EQ(two.syncs, 4);
  EXPECT_EQ(two.h2d_bytes, 88);
  EXPECT_EQ(one.for_batch(8, 2, 1).syncs, 3);  // one of the two is the step's, not a part's
}

// The runner reuses one StepResult for every step: what a strategy reads of it must be what a
// fresh one holds, while the attended rows keep their memory.
TEST(StepResult, ClearKeepingMemoryReadsAsFresh) {
  StepResult r;
  r.o = {1.0f, 2.0f};
  r.total_ns = 7;
  r.phase_ns["cpu"] = 3;
  r.traffic.h2d_bytes = 9;
  r.attended = {{0, 1, 2}, {}};
  EXPECT_TRUE(r.lists_attended());
  const int64_t* row0 = r.attended[0].data();
  r.clear_keeping_memory();
  EXPECT_TRUE(r.o.empty());
  EXPECT_EQ(r.total_ns, 0);
  EXPECT_TRUE(r.phase_ns.empty());
  EXPECT_EQ(r.traffic.h2d_bytes, 0);
  EXPECT_FALSE(r.lists_attended());  // every row reads dense
  ASSERT_EQ(r.attended.size(), 2u);
  EXPECT_GE(r.attended[0].capacity(), 3u);
  r.attended[0].assign({4, 5});
  EXPECT_EQ(r.attended[0].data(), row0);  // refilled in place
  EXPECT_TRUE(r.lists_attended());
  EXPECT_FALSE(StepResult{}.lists_attended());
}

TEST(StrategyOptions, ReadsDefaultsAndRejectsTypos) {
  StrategyOptions o(
      std::map<std::string, std::string>{{"h2o.heavy_ratio", "0.2"}, {"h2o.recnt", "3"}});
  EXPECT_EQ(o.number("h2o", "heavy_ratio", 0.1), 0.2);
  EXPECT_EQ(o.number("h2o", "recent_ratio", 0.1), 0.1);
  EXPECT_THROW(o.check_all_used("h2o"), Error);
  try {
    o.check_all_used("h2o");
  } catch (const Error& e) {  // the typo named, and the options the strategy did ask for
    EXPECT_NE(e.problem().find("'recnt'"), std::string::npos) << e.problem();
    EXPECT_NE(e.fix().find("heavy_ratio, recent_ratio"), std::string::npos) << e.fix();
  }
  StrategyOptions none(std::map<std::string, std::string>{{"cpu-only.ratio", "1"}});
  try {
    none.check_all_used("cpu-only");
    ADD_FAILURE() << "an option a strategy never asks for is refused";
  } catch (const Error& e) {
    EXPECT_NE(e.fix().find("cpu-only takes no options"), std::string::npos) << e.fix();
  }
  StrategyOptions bad(std::map<std::string, std::string>{{"quest.budget", "lots"}});
  EXPECT_THROW(bad.number("quest", "budget", 2048), Error);
}

}  // namespace
}  // namespace hb
