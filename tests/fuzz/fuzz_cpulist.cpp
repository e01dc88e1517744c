// Fuzzes the Linux list parser (memtier/cpulist.h) that reads sysfs cpulist/nodelist files and
// --cpu-nodes style options. What parses must format back to a list that parses to the same ids.
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
  return 0;
}
