// Numbers at the edges of the report reader (reports/json_checked.h), found by
// tests/fuzz/fuzz_report_json. Reads the fuzz seed report and changes one field.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/error.h"
#include "reports/json_io.h"

using namespace hb::reports;

namespace {

std::string seed_report() {
  std::ifstream f(HB_SOURCE_DIR "/tests/fuzz/corpus/fuzz_report_json/measured-one-point.json");
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string with_seq_len(const std::string& value) {
  std::string text = seed_report();
  const std::string key = "\"seq_len\":256";
  const size_t at = text.find(key);
  if (at == std::string::npos) return {};
  return text.replace(at, key.size(), "\"seq_len\":" + value);
}

}  // namespace

TEST(ReportJsonNumbers, SeedReadsAndWholeFloatsAreIntegers) {
  ASSERT_FALSE(with_seq_len("256").empty()) << "seed report moved or changed";
  EXPECT_EQ(from_json_text(with_seq_len("256.0"), "t.json").points.at(0).axes.seq_len, 256);
}

// An integer field holding 1e300 was cast to int64_t before the range was known: undefined
// behaviour (UBSan: "1e+300 is outside the range of representable values"), whatever value a
// normal build then made of it. Now it is "expected an integer" naming the JSON path.
TEST(ReportJsonNumbers, FloatsOutsideInt64AreNotIntegers) {
  for (const char* v : {"1e300", "-1e300", "9223372036854775808.0", "-9.3e18"}) {
    try {
      from_json_text(with_seq_len(v), "t.json");
      ADD_FAILURE() << v << " was accepted";
    } catch (const hb::Error& e) {
      EXPECT_NE(e.problem().find("seq_len"), std::string::npos) << e.problem();
    }
  }
}
