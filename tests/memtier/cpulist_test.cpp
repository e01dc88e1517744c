// The Linux list parser (memtier/cpulist.h) on input found by tests/fuzz/fuzz_cpulist.
#include <gtest/gtest.h>

#include "core/error.h"
#include "memtier/cpulist.h"

using namespace hb::memtier;

TEST(CpuList, ParsesAndFormatsRanges) {
  EXPECT_EQ(parse_cpulist(" 0-3,8,10-11\n", "t"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(format_cpulist(parse_cpulist("8,0-3,2", "t")), "0-3,8");
  EXPECT_TRUE(parse_cpulist("", "t").empty());
  EXPECT_EQ(parse_cpulist("65535", "t"), (std::vector<int>{kMaxListId}));
}

// Found by fuzz_cpulist: "0-368316831" ran past the 10 s limit expanding 368 million ids (and
// 0-2147483647 took 8.4 GB, then overflowed the loop counter). Ids above any CPU or node number
// are refused before anything is expanded, the error naming the id and the list's origin.
TEST(CpuList, HugeIdsAreRefusedBeforeExpanding) {
  try {
    parse_cpulist("0-2147483647", "--cpu-nodes");
    FAIL() << "expected hb::Error";
  } catch (const hb::Error& e) {
    EXPECT_NE(e.problem().find("2147483647"), std::string::npos) << e.problem();
    EXPECT_NE(e.problem().find("--cpu-nodes"), std::string::npos) << e.problem();
  }
  EXPECT_THROW(parse_cpulist("0-368316831", "t"), hb::Error);
  EXPECT_THROW(parse_cpulist("65536", "t"), hb::Error);
}
