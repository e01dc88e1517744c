// JSON text with a key given twice in one object is refused, naming the key and where it is;
// the same key in different objects, and every other document, parse as nlohmann parses them.
#include "core/json_text.h"

#include <string>

#include <gtest/gtest.h>

namespace hb {
namespace {

using Json = nlohmann::json;
using Ordered = nlohmann::ordered_json;

std::string refusal(const std::string& text) {
  try {
    parse_json_text<Ordered>(text);
  } catch (const JsonDuplicateKey& e) {
    return e.what();
  }
  return "";
}

TEST(JsonText, ParsesAsTheLibraryDoes) {
  for (const char* text : {"{}", "[]", "1", "\"x\"",
                           "{\"a\": {\"a\": 1}, \"b\": [{\"a\": 1}, "
                           "{\"a\": 2}]}",
                           "[{\"k\": 1}, {\"k\": 2}]", "{\"\": 1}"})
    EXPECT_EQ(parse_json_text<Json>(text), Json::parse(text)) << text;
}

TEST(JsonText, ADuplicateKeyIsRefusedWithItsPath) {
  EXPECT_NE(refusal("{\"points\": [], \"points\": [1]}")
                .find("duplicate key \"points\" in the "
                      "object at $"),
            std::string::npos);
  const std::string nested =
      refusal("{\"points\": [{\"axes\": {\"seq_len\": 1, \"seq_len\": 2}}]}");
  EXPECT_NE(nested.find("\"seq_len\""), std::string::npos) << nested;
  EXPECT_NE(nested.find("$.points.axes"), std::string::npos) << nested;
  EXPECT_NE(refusal("{\"\": 1, \"\": 2}"), "");
}

TEST(JsonText, MalformedTextStillThrowsTheLibraryError) {
  EXPECT_THROW(parse_json_text<Json>("{\"a\": "), nlohmann::json::parse_error);
  EXPECT_THROW(parse_json_text<Json>(""), nlohmann::json::parse_error);
}

}  // namespace
}  // namespace hb
