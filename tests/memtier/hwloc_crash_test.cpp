// hwloc XML that crashes hwloc itself (memtier/hwloc_reader.cpp), found by
// tests/fuzz/fuzz_hwloc_xml.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "memtier/hwloc_reader.h"

namespace fs = std::filesystem;

// The KNL fixture with one PU's complete_cpuset attribute misspelt: hwloc 2.9.0 ignores the
// unknown attribute, then dereferences the missing complete cpuset (SEGV in
// hwloc_bitmap_compare_first; `hybridbench topo --topology` and lstopo exited 139). Now the file
// is refused with an error naming it.
TEST(HwlocCrash, MalformedXmlThatCrashesHwlocIsAnError) {
  std::ifstream in(HB_TOPOLOGY_DIR "/64intel64-fakeKNL-SNC4-hybrid.xml");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  const std::string pu = "os_index=\"50\" cpuset=\"0x00040000,0x0\" complete_cpuset=";
  const size_t at = text.find(pu);
  ASSERT_NE(at, std::string::npos) << "fixture changed";
  text.replace(at + pu.size() - 16, 15, "complete_cpsuet");
  const fs::path f =
      fs::temp_directory_path() / ("hb-hwloc-crash-" + std::to_string(::getpid()) + ".xml");
  std::ofstream(f) << text;
  try {
    hb::memtier::read_hwloc(f.string());
    ADD_FAILURE() << "a malformed file was loaded";
  } catch (const hb::Error& e) {
    EXPECT_NE(e.problem().find(f.string()), std::string::npos) << e.problem();
  }
  fs::remove(f);
  EXPECT_NO_THROW(hb::memtier::read_hwloc(HB_TOPOLOGY_DIR "/64intel64-fakeKNL-SNC4-hybrid.xml"));
}
