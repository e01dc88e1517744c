// The numbers hwloc reads from XML without checking: an OS index or a bitmap that is not one is
// refused naming the attribute and its line; every shipped topology passes.
#include "memtier/hwloc_xml_check.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>

#include <gtest/gtest.h>

#include "core/error.h"

namespace hb::memtier {
namespace {

const std::string kXml =
    "<?xml version=\"1.0\"?>\n<topology version=\"2.0\">\n"
    "  <object type=\"Machine\" os_index=\"0\" cpuset=\"0x00000003\" complete_cpuset=\"0xf...f,"
    "0x00000003\" nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\" gp_index=\"1\">\n"
    "  </object>\n</topology>\n";

std::string with(const std::string& from, const std::string& to) {
  std::string t = kXml;
  t.replace(t.find(from), from.size(), to);
  return t;
}

TEST(HwlocXmlCheck, WellFormedNumbersPass) {
  EXPECT_NO_THROW(check_hwloc_xml_numbers(kXml, "t.xml", "fix"));
  EXPECT_NO_THROW(
      check_hwloc_xml_numbers(with("0x00000003\" nodeset", "0x1,0x0\" nodeset"), "t.xml", "fix"));
  EXPECT_NO_THROW(check_hwloc_xml_numbers("", "t.xml", "fix"));
}

TEST(HwlocXmlCheck, BadIndicesAndBitmapsAreRefusedByLine) {
  const std::string huge_set = "0x" + std::string(100000, 'f');
  for (const auto& [from, to, named] :
       {std::tuple<std::string, std::string, std::string>{"os_index=\"0\"", "os_index=\"-1\"",
                                                          "os_index=\"-1\""},
        {"os_index=\"0\"", "os_index=\"99999999999999999999\"", "os_index"},
        {"os_index=\"0\"", "os_index=\"2147483648\"", "os_index"},
        {"os_index=\"0\"", "os_index=\"\"", "os_index"},
        {"cpuset=\"0x00000003\"", "cpuset=\"0xZZ\"", "cpuset=\"0xZZ\""},
        {"cpuset=\"0x00000003\"", "cpuset=\"" + huge_set + "\"", "..."},
        {"cpuset=\"0x00000003\"", "cpuset=\"3\"", "cpuset"},
        {"nodeset=\"0x00000001\"", "nodeset=\"0x1,,0x2\"", "nodeset"},
        {"complete_cpuset=\"0xf...f,", "complete_cpuset=\"0xf...f,,", "complete_cpuset"}}) {
    SCOPED_TRACE(to.substr(0, 60));
    try {
      check_hwloc_xml_numbers(with(from, to), "t.xml", "the fix");
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_NE(e.problem().find("t.xml, line 3: "), std::string::npos) << e.problem();
      EXPECT_NE(e.problem().find(named), std::string::npos) << e.problem();
      EXPECT_LT(e.problem().size(), 300u);
      EXPECT_EQ(e.fix(), "the fix");
      EXPECT_EQ(e.exit_code(), kExitUsage);
    }
  }
}

TEST(HwlocXmlCheck, EveryShippedTopologyPasses) {
  for (const auto& e : std::filesystem::directory_iterator(HB_TOPOLOGY_DIR)) {
    if (e.path().extension() != ".xml") continue;
    std::ifstream in(e.path());
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_NO_THROW(check_hwloc_xml_numbers(text.str(), e.path().string(), "fix")) << e.path();
  }
}

}  // namespace
}  // namespace hb::memtier
