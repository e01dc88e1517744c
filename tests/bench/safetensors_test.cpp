// The safetensors header's own rules: __metadata__ is an object of strings, and a key given twice
// is refused (a second tensor entry would replace the first unseen).
#include "bench/safetensors.h"

#include <string>

#include <gtest/gtest.h>

#include "core/error.h"

namespace hb::bench {
namespace {

const std::string kTensor = R"("k": {"dtype": "F16", "shape": [2, 4], "data_offsets": [0, 16]})";

std::string refusal(const std::string& header) {
  try {
    parse_safetensors_header(header, 16, "t.safetensors");
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage);
    return e.problem();
  }
  return "";
}

TEST(SafetensorsHeader, MetadataOfStringsIsAccepted) {
  const auto t = parse_safetensors_header(
      "{\"__metadata__\": {\"needle_token\": \"5\"}, " + kTensor + "}", 16, "t.safetensors");
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t.at("k").numel, 8);
}

TEST(SafetensorsHeader, MetadataThatIsNotAnObjectOfStringsIsRefused) {
  EXPECT_NE(refusal("{\"__metadata__\": 5, " + kTensor + "}").find("__metadata__ is not an object"),
            std::string::npos);
  EXPECT_NE(refusal("{\"__metadata__\": {\"needle_token\": 5}, " + kTensor + "}")
                .find("'needle_token' is not a string"),
            std::string::npos);
}

TEST(SafetensorsHeader, ATensorNamedTwiceIsRefused) {
  EXPECT_NE(refusal("{" + kTensor + ", " + kTensor + "}").find("duplicate key \"k\""),
            std::string::npos);
}

}  // namespace
}  // namespace hb::bench
