// Whole-number figures of a platform profile (model/platform_model.h) out of range,
// found while writing tests/fuzz/fuzz_platform_profile.
#include <gtest/gtest.h>

#include "core/error.h"
#include "model/platform_model.h"

using namespace hb::model;

namespace {

std::string preset_with(const std::string& from, const std::string& to) {
  std::string text = preset_text("gh200-c2c");
  const size_t at = text.find(from);
  if (at == std::string::npos) return {};
  return text.replace(at, from.size(), to);
}

}  // namespace

// "numa_node": 1e10 was cast to int before any range check: undefined behaviour (UBSan: "1e+10
// is outside the range of representable values of type 'int'"), whatever a normal build then
// read. Now it is refused, naming the member.
TEST(ProfileNumbers, WholeNumbersOutsideTheirTypeAreRefused) {
  ASSERT_FALSE(preset_with("\"numa_node\": 0", "\"numa_node\": 0").empty()) << "preset changed";
  EXPECT_EQ(
      parse_platform_model(preset_with("\"numa_node\": 0", "\"numa_node\": 1"), "t.json", false)
          .accelerator.numa_node,
      1);
  for (const char* v : {"1e10", "-3e9", "2147483648"}) {
    try {
      parse_platform_model(preset_with("\"numa_node\": 0", std::string("\"numa_node\": ") + v),
                           "t.json", false);
      ADD_FAILURE() << v << " was accepted";
    } catch (const hb::Error& e) {
      EXPECT_NE(e.problem().find("numa_node"), std::string::npos) << e.problem();
    }
  }
}

// A profile file that fails validation is the user's (often a copy of a preset, whose "source"
// still says preset): the fix names the file, never "fix the preset"; only a built-in preset
// (origin preset:NAME) is ours.
TEST(ProfileNumbers, AUsersOwnFileIsNotCalledThePreset) {
  const std::string text = preset_with("\"memory_usable_share\": {\"value\": 0.9",
                                       "\"memory_usable_share\": {\"value\": 7");
  ASSERT_FALSE(text.empty()) << "preset changed";
  try {
    parse_platform_model(text, "my-platform.json", true);
    ADD_FAILURE() << "accepted";
  } catch (const hb::Error& e) {
    EXPECT_NE(e.problem().find("memory_usable_share"), std::string::npos) << e.problem();
    EXPECT_EQ(e.fix().find("fix the preset"), std::string::npos) << e.fix();
    EXPECT_NE(e.fix().find("your file my-platform.json"), std::string::npos) << e.fix();
  }
  try {
    parse_platform_model(text, "preset:gh200-c2c", true);
    ADD_FAILURE() << "accepted";
  } catch (const hb::Error& e) {
    EXPECT_NE(e.fix().find("built-in preset"), std::string::npos) << e.fix();
  }
}
