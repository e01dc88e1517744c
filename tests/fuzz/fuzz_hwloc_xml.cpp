// Fuzzes the hwloc XML loading path of `topo --topology FILE.xml` (memtier/discover.h): hwloc's
// own XML import, our walk over what it built (NUMA nodes, HMAT attributes, PCI and CXL
// devices), tier classification, and the topology JSON printer. The reader takes only a path,
// so the input goes through a scratch file.
#include <cstdint>

#include "core/error.h"
#include "memtier/discover.h"
#include "memtier/profile.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  hb::memtier::DiscoverOptions opts;
  opts.topology_xml = hb::fuzz::as_file(data, size, ".xml");
  try {
    const hb::memtier::Topology topo = hb::memtier::discover(opts);
    hb::memtier::topology_json(topo, hb::memtier::SystemSettings{});
  } catch (const hb::Error&) {
  }
  return 0;
}
