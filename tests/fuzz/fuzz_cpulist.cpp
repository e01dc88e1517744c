// Fuzzes the Linux list parser (memtier/cpulist.h) that reads sysfs cpulist/nodelist files and
// --cpu-nodes style options (numactl's all / !LIST too). What parses must format back to a list
// that parses to the same ids.
#include <cstdint>
#include <cstdlib>

#include "core/error.h"
#include "memtier/cpulist.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const std::vector<int> ids = hb::memtier::parse_cpulist(hb::fuzz::as_text(data, size), "fuzz");
    if (hb::memtier::parse_cpulist(hb::memtier::format_cpulist(ids), "fuzz-roundtrip") != ids)
      std::abort();
  } catch (const hb::Error&) {
  }
  try {  // numactl's all / !LIST against a machine list: a subset of it or of the list, sorted
    const std::vector<int> all = {0, 1, 2, 3, 8};
    const std::vector<int> ids =
        hb::memtier::parse_machine_list(hb::fuzz::as_text(data, size), "fuzz", all);
    for (size_t i = 1; i < ids.size(); ++i)
      if (ids[i - 1] >= ids[i]) std::abort();
  } catch (const hb::Error&) {
  }
  return 0;
}
