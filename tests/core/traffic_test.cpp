#include <cmath>

#include <gtest/gtest.h>

#include "core/traffic.h"

namespace hb {
namespace {

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

}  // namespace
}  // namespace hb
