// The Linux list parser (memtier/cpulist.h) on input found by tests/fuzz/fuzz_cpulist.
#include <functional>

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

// hwloc's parser alone would read these silently as something else ("0x3" as 3, "08" as nothing,
// "3-1" and "0-7:2" losing ids, "5-" as an infinite set); the strict check in front refuses them.
TEST(CpuList, SpellingsHwlocWouldMisreadAreRefused) {
  for (const char* bad : {"0x3", "3-1", "5-", "0-7:2", "1 2", "0,,1", "-1", "abc"})
    EXPECT_THROW(parse_cpulist(bad, "t"), hb::Error) << bad;
  EXPECT_EQ(parse_cpulist(" 1 , 2-3 ,", "t"), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(parse_cpulist("08", "t"), (std::vector<int>{8}));  // decimal, as the kernel writes
}

std::string problem_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const hb::Error& e) {
    EXPECT_EQ(e.exit_code(), hb::kExitUsage);
    return e.problem() + " | " + e.fix();
  }
  return "(no error)";
}

// numactl's syntax where a list names this machine's nodes (`probe --cpu-nodes`): all, !LIST.
TEST(CpuList, MachineListsTakeNumactlAllAndInversion) {
  const std::vector<int> all = {0, 1, 2, 3};
  EXPECT_EQ(parse_machine_list("all", "--cpu-nodes", all), all);
  EXPECT_EQ(parse_machine_list(" all\n", "--cpu-nodes", all), all);
  EXPECT_EQ(parse_machine_list("!0", "--cpu-nodes", all), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(parse_machine_list("!1-2", "--cpu-nodes", all), (std::vector<int>{0, 3}));
  EXPECT_EQ(parse_machine_list("!7", "--cpu-nodes", all), all);  // nothing to take away
  EXPECT_EQ(parse_machine_list("0-1,3", "--cpu-nodes", all), (std::vector<int>{0, 1, 3}));
  // Ids the machine lacks are the caller's to refuse (it names the nodes it has).
  EXPECT_EQ(parse_machine_list("9", "--cpu-nodes", all), (std::vector<int>{9}));

  // Refused, naming the option, with what to write instead.
  const std::string none = problem_of([&] { parse_machine_list("!0-3", "--mem-nodes", all); });
  EXPECT_NE(none.find("nothing is left"), std::string::npos) << none;
  EXPECT_NE(none.find("--mem-nodes"), std::string::npos) << none;
  const std::string rel = problem_of([&] { parse_machine_list("+0-1", "--cpu-nodes", all); });
  EXPECT_NE(rel.find("relative list"), std::string::npos) << rel;
  EXPECT_NE(rel.find("--cpu-nodes"), std::string::npos) << rel;
  const std::string stride = problem_of([&] { parse_machine_list("0-3:2", "--cpu-nodes", all); });
  EXPECT_NE(stride.find("strided"), std::string::npos) << stride;
  for (const char* bad : {"0,all", "!!0", "!all", "0,!1", "all,1", "!"})
    EXPECT_NE(problem_of([&] { parse_machine_list(bad, "--cpu-nodes", all); }), "(no error)")
        << bad;
  const std::string huge =
      problem_of([&] { parse_machine_list("!0-2147483647", "--cpu-nodes", all); });
  EXPECT_NE(huge.find("larger than 65535"), std::string::npos) << huge;

  // Lists read from files know no machine list: all and ! are refused there.
  const std::string file = problem_of([] { parse_cpulist("all", "has_cpu"); });
  EXPECT_NE(file.find("numactl"), std::string::npos) << file;
  EXPECT_NE(file.find("has_cpu"), std::string::npos) << file;
  EXPECT_NE(problem_of([] { parse_cpulist("!0", "has_cpu"); }), "(no error)");
}
