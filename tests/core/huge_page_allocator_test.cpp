#include "core/huge_page_allocator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace hb {
namespace {

using BigVector = std::vector<double, HugePageAllocator<double>>;
constexpr size_t kBig = (size_t{8} << 20) / sizeof(double);  // 8 MiB: its own mapping

bool all_zero(const BigVector& v) {
  return std::all_of(v.begin(), v.end(), [](double x) { return x == 0.0; });
}

// AnonHugePages of the mapping holding p, from /proc/self/smaps (-1 when not found).
int64_t anon_huge_kb(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto addr = reinterpret_cast<uintptr_t>(p);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> lo >> dash >> hi && dash == '-') {
      inside = lo <= addr && addr < hi;
      continue;
    }
    if (inside && line.rfind("AnonHugePages:", 0) == 0)
      return std::stoll(line.substr(std::string("AnonHugePages:").size()));
  }
  return -1;
}

std::string thp_mode() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  for (const char* m : {"always", "madvise", "never"})
    if (s.find(std::string("[") + m + "]") != std::string::npos) return m;
  return "unknown";
}

TEST(HugePageAllocator, LargeVectorsAreAlignedZeroedAndReused) {
  const void* first = nullptr;
  {
    BigVector v(kBig);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(v.data()) % (size_t{2} << 20), 0u);
    EXPECT_TRUE(all_zero(v));
    std::fill(v.begin(), v.end(), 3.5);
    first = v.data();
  }
  // A request of the same size takes the released mapping back, values initialised anew.
  BigVector again(kBig);
  EXPECT_EQ(again.data(), first);
  EXPECT_TRUE(all_zero(again));
  // Growing past it moves the values into a new mapping.
  again[kBig - 1] = 7.0;
  again.resize(kBig + 1);
  EXPECT_EQ(again[kBig - 1], 7.0);
  EXPECT_EQ(again[kBig], 0.0);
}

TEST(HugePageAllocator, SmallVectorsAreOrdinary) {
  for (size_t n :
       {size_t{0}, size_t{1}, size_t{1000}, huge_pages::kMinBytes / sizeof(double) - 1}) {
    BigVector v(n, 2.0);
    EXPECT_EQ(v.size(), n);
    EXPECT_TRUE(std::all_of(v.begin(), v.end(), [](double x) { return x == 2.0; }));
  }
}

// Under THP "madvise" or "always" the touched mapping is backed by huge pages (read back from
// /proc/self/smaps; compaction may miss some, not all four).
TEST(HugePageAllocator, TouchedMemoryGetsHugePages) {
  const std::string mode = thp_mode();
  if (mode != "madvise" && mode != "always")
    GTEST_SKIP() << "transparent huge pages are '" << mode << "' here";
  BigVector v(kBig, 1.0);
  EXPECT_GT(anon_huge_kb(v.data()), 0) << "THP " << mode;
}

}  // namespace
}  // namespace hb
