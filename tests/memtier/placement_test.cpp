// Real placement on this machine's node 0 and the move_pages check of where pages landed;
// the clear errors for nodes that do not exist and sizes that do not fit.
#include <sys/mman.h>

#include <string>

#include <gtest/gtest.h>

#include "core/error.h"
#include "memtier/numa_allocator.h"
#include "memtier/placement.h"

namespace hb::memtier {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Placement, BindToNodeZeroLandsOnNodeZero) {
  NumaAllocator alloc({MemoryKind::local_dram, 0, false}, NumaPolicy::bind_to(0));
  Buffer b = alloc.allocate(32 * kMiB + 123);
  ASSERT_TRUE(b);
  EXPECT_EQ(b.location().to_string(), "local-dram@0");
  EXPECT_EQ(b.as<unsigned char>()[32 * kMiB], 0);  // zeroed
  const PlacementReport r = verify_placement(b.data(), b.size(), {0});
  EXPECT_TRUE(r.ok) << r.summary();
  EXPECT_EQ(r.pages_total, r.pages_checked);
  EXPECT_EQ(r.pages_per_node.size(), 1u);
  EXPECT_EQ(r.pages_per_node.at(0), r.pages_total);
  EXPECT_DOUBLE_EQ(r.fraction_on(0), 1.0);
  EXPECT_NE(r.summary().find("node 0: "), std::string::npos);
  EXPECT_NE(r.summary().find("(100.0%)"), std::string::npos);
}

TEST(Placement, InterleaveAndHugePages) {
  NumaPolicy p{NumaMode::interleave, {0}, {}, true};
  NumaAllocator alloc({MemoryKind::local_dram, 0, false}, p);
  Buffer b = alloc.allocate(8 * kMiB);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % (2 * kMiB), 0u);
  const PlacementReport r = verify_placement(b.data(), b.size(), {0});
  EXPECT_TRUE(r.ok);
  EXPECT_GE(r.huge_page_bytes, 0) << "smaps unreadable";  // how much THP gave depends on the kernel
  EXPECT_EQ(p.describe(), "interleave 0 +thp");
}

TEST(Placement, SampledCheckAndMemoryRegion) {
  NumaAllocator alloc({MemoryKind::local_dram, 0, false}, NumaPolicy::bind_to(0));
  Buffer b = alloc.allocate(16 * kMiB);
  const PlacementReport r =
      verify_placement(MemoryRegion{b.data(), b.size(), b.location(), "K"}, 1000);
  EXPECT_TRUE(r.ok);
  EXPECT_GT(r.stride, 1);
  EXPECT_LE(r.pages_checked, 1000);
}

TEST(Placement, UntouchedPagesAreReported) {
  const size_t len = 4 * kMiB;
  void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  static_cast<char*>(p)[0] = 1;  // one page present
  const PlacementReport r = verify_placement(p, len, {0});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.pages_not_present, r.pages_total - 1);
  EXPECT_NE(r.summary().find("NOT where intended"), std::string::npos);
  munmap(p, len);
}

TEST(PlacementErrors, NonexistentNode) {
  const std::string msg = error_of([] {
    NumaAllocator({MemoryKind::cxl, 57, false}, NumaPolicy::bind_to(57));
  });
  EXPECT_NE(msg.find("NUMA node 57 does not exist on this machine"), std::string::npos) << msg;
  EXPECT_NE(msg.find("fix: pick a node"), std::string::npos) << msg;
}

TEST(PlacementErrors, TooLittleFreeMemory) {
  NumaAllocator alloc({MemoryKind::local_dram, 0, false}, NumaPolicy::bind_to(0));
  const std::string msg = error_of([&] { alloc.allocate(size_t{1} << 50); });
  EXPECT_NE(msg.find("cannot place 1048576.00 GiB for local-dram@0 (bind 0): only"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("free on node(s) 0"), std::string::npos) << msg;
}

TEST(PlacementErrors, WeightedInterleaveWeightsAreChecked) {
  NumaPolicy p{NumaMode::weighted_interleave, {0}, {250}, false};
  const std::string msg = error_of([&] { NumaAllocator({MemoryKind::local_dram, 0, false}, p); });
  // Either the kernel lacks the mode, or its weight for node 0 is not 250.
  EXPECT_TRUE(msg.find("not offered by this kernel") != std::string::npos ||
              msg.find("wants weight 250 on node 0 but the kernel has") != std::string::npos)
      << msg;
}

TEST(Placement, WeightedInterleaveWhereOffered) {
  NumaPolicy p{NumaMode::weighted_interleave, {0}, {}, false};
  try {
    NumaAllocator alloc({MemoryKind::local_dram, 0, false}, p);
    Buffer b = alloc.allocate(4 * kMiB);
    EXPECT_TRUE(verify_placement(b.data(), b.size(), {0}).ok);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not offered by this kernel"), std::string::npos)
        << e.what();
    GTEST_SKIP() << "kernel without weighted interleave";
  }
}

}  // namespace
}  // namespace hb::memtier
