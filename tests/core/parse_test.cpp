// core/parse: every number a user types is taken whole, finite and in range, or refused with
// the option named, the bad text quoted and a fix. The refused examples are the ones that used
// to run silently with a wrong value (issue 14, defect 7).
#include "core/parse.h"

#include <cstdint>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "core/error.h"

namespace hb::parse {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

// Expects `fn` to throw an hb::Error (exit 2) whose problem names `what` and quotes `text`.
template <class F>
void expect_refused(F fn, const std::string& what, const std::string& text) {
  try {
    fn();
    ADD_FAILURE() << what << " accepted '" << text << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage);
    EXPECT_NE(e.problem().find(what), std::string::npos) << e.problem();
    EXPECT_NE(e.problem().find("'" + text + "'"), std::string::npos) << e.problem();
    EXPECT_FALSE(e.fix().empty()) << e.problem();
  }
}

TEST(ParseInteger, TakesWholeNumbersInRange) {
  EXPECT_EQ(integer("0", "--warmup", 0, 10), 0);
  EXPECT_EQ(integer("1", "--batch", 1, 4096), 1);
  EXPECT_EQ(integer("4096", "--batch", 1, 4096), 4096);
  EXPECT_EQ(integer(" 7\t", "--batch", 1, 4096), 7);  // surrounding blanks only
  EXPECT_EQ(integer("-1", "--accuracy-steps", -1, 100), -1);
  EXPECT_EQ(integer("9223372036854775807", "n", 0, kMax), kMax);
  EXPECT_EQ(integer("-9223372036854775808", "n", kMin, kMax), kMin);
}

TEST(ParseInteger, RefusesWhatUsedToSlipThrough) {
  for (const char* bad : {"2x", "1.9", "1e3", "", "0x10", "+3", "3 4", "nan", "inf", "--1", "4k"})
    expect_refused([&] { integer(bad, "--batch", 1, 4096); }, "--batch", bad);
  expect_refused([] { integer("-5", "--warmup", 0, 100); }, "--warmup", "-5");
  expect_refused([] { integer("4097", "--batch", 1, 4096); }, "--batch", "4097");
  expect_refused([] { integer("0", "--batch", 1, 4096); }, "--batch", "0");
  expect_refused([] { integer("9223372036854775808", "n", 0, kMax); }, "n", "9223372036854775808");
  expect_refused([] { integer("-9223372036854775809", "n", kMin, kMax); }, "n",
                 "-9223372036854775809");
  try {
    integer("-5", "--warmup", 0, 100);
  } catch (const Error& e) {
    EXPECT_NE(e.fix().find("from 0 to 100"), std::string::npos) << e.fix();
  }
}

TEST(ParseInteger, EmptyTextIsNamed) {
  try {
    integer("  ", "--decode-steps", 1, 10);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(e.problem().find("--decode-steps '' is empty"), std::string::npos) << e.problem();
  }
}

TEST(ParseUnsigned, TakesEveryUint64) {
  EXPECT_EQ(unsigned_integer("0", "--seed"), 0u);
  EXPECT_EQ(unsigned_integer("18446744073709551615", "--seed"),
            std::numeric_limits<uint64_t>::max());
  for (const char* bad : {"-1", "18446744073709551616", "1.5", "42x", ""})
    expect_refused([&] { unsigned_integer(bad, "--seed"); }, "--seed", bad);
}

TEST(ParseReal, TakesFiniteNumbersInRange) {
  EXPECT_DOUBLE_EQ(real("0.05", "--max-noise", RealRange::above(0)), 0.05);
  EXPECT_DOUBLE_EQ(real("1e-3", "--max-noise", RealRange::above(0)), 1e-3);
  EXPECT_DOUBLE_EQ(real("0", "--min-effect", RealRange::at_least(0)), 0.0);
  EXPECT_DOUBLE_EQ(real("1", "--recall-tolerance", RealRange::between(0, 1)), 1.0);
  EXPECT_DOUBLE_EQ(real("-2.5", "x", RealRange{}), -2.5);
  EXPECT_DOUBLE_EQ(real(" 3 ", "x", RealRange{}), 3.0);
}

TEST(ParseReal, RefusesNonFiniteJunkAndOutOfRange) {
  for (const char* bad :
       {"nan", "NaN", "inf", "-inf", "infinity", "1e400", "0x1p3", "5%", "0.2x", "", "1,5", ". "})
    expect_refused([&] { real(bad, "--max-noise", RealRange::above(0)); }, "--max-noise",
                   std::string(bad) == ". " ? "." : bad);
  expect_refused([] { real("0", "--max-noise", RealRange::above(0)); }, "--max-noise", "0");
  expect_refused([] { real("-5", "--recall-tolerance", RealRange::between(0, 1)); },
                 "--recall-tolerance", "-5");
  expect_refused([] { real("1", "--alpha", RealRange{0, 1, true, true}); }, "--alpha", "1");
  expect_refused([] { real("nan", "--accuracy-tolerance", RealRange::at_least(0)); },
                 "--accuracy-tolerance", "nan");
  expect_refused([] { real("nan", "--opt h2o.heavy_ratio", RealRange{}); }, "--opt h2o.heavy_ratio",
                 "nan");
}

TEST(ParseReal, RangeTextReadsAsUsersWriteIt) {
  EXPECT_EQ(RealRange::above(0).text(), "> 0");
  EXPECT_EQ(RealRange::between(0, 1).text(), ">= 0 and <= 1");
  EXPECT_EQ((RealRange{0, 1, true, true}).text(), "> 0 and < 1");
  EXPECT_EQ(RealRange{}.text(), "any finite number");
}

TEST(ParseCount, TakesSuffixesAndChecksOverflow) {
  EXPECT_EQ(count("4096", "--seq-len", 1, kMax), 4096);
  EXPECT_EQ(count("4k", "--seq-len", 1, kMax), 4096);
  EXPECT_EQ(count("128K", "--seq-len", 1, kMax), 131072);
  EXPECT_EQ(count("1m", "--seq-len", 1, kMax), 1 << 20);
  EXPECT_EQ(count("9007199254740991k", "n", 0, kMax),
            int64_t{9007199254740991} * 1024);                                     // just fits
  EXPECT_EQ(count("8796093022207m", "n", 0, kMax), int64_t{8796093022207} << 20);  // just fits
  EXPECT_EQ(count("9223372036854775807", "n", 0, kMax), kMax);
  for (const char* bad : {"9007199254740992k", "8796093022208m", "9223372036854775807k",
                          "9223372036854775808", "1.5k", "4q", "k", "", "-4k", "nan"})
    expect_refused([&] { count(bad, "--seq-len", 1, kMax); }, "--seq-len", bad);
  expect_refused([] { count("2k", "--seq-len", 1, 1024); }, "--seq-len", "2k");
}

TEST(ParseBytes, TakesUnitsAndWholeBytes) {
  EXPECT_EQ(bytes("4096", "--accelerator-memory", 1), 4096);
  EXPECT_EQ(bytes("4096B", "--accelerator-memory", 1), 4096);
  EXPECT_EQ(bytes("1", "--accelerator-memory", 1), 1);
  EXPECT_EQ(bytes("512M", "--accelerator-memory", 1), int64_t{512} << 20);
  EXPECT_EQ(bytes("512MiB", "--accelerator-memory", 1), int64_t{512} << 20);
  EXPECT_EQ(bytes("2G", "--accelerator-memory", 1), int64_t{2} << 30);
  EXPECT_EQ(bytes("2g", "--accelerator-memory", 1), int64_t{2} << 30);
  EXPECT_EQ(bytes("1.5GiB", "--accelerator-memory", 1), int64_t{3} << 29);
  EXPECT_EQ(bytes("0.5K", "--accelerator-memory", 1), 512);
  EXPECT_EQ(bytes("1T", "--accelerator-memory", 1), int64_t{1} << 40);
  EXPECT_EQ(bytes("8388607T", "x", 1), int64_t{8388607} << 40);  // the largest whole T below 2^63
  EXPECT_EQ(bytes("9223372036854775807", "x", 1), kMax);
}

TEST(ParseBytes, RefusesWhatUsedToBecomeTwoGibOrNegative) {
  // Each of these ran with the 2 GiB default or recorded -9223372036854775808.
  for (const char* bad : {"inf", "nan", "0.5", "1e30G", "8388608T", "9223372036854775808", "0",
                          "-1G", "", "2X", "2GB ", "G", "1e30", "infG", "1.5"})
    expect_refused([&] { bytes(bad, "--accelerator-memory", 1); }, "--accelerator-memory",
                   std::string(bad) == "2GB " ? "2GB" : bad);
  expect_refused([] { bytes("512K", "--accelerator-memory", int64_t{1} << 20); },
                 "--accelerator-memory", "512K");
  expect_refused([] { bytes("2G", "x", 1, int64_t{1} << 30); }, "x", "2G");
}

TEST(ParseSeconds, TakesUnits) {
  EXPECT_DOUBLE_EQ(seconds("30", "--timeout", RealRange::above(0)), 30.0);
  EXPECT_DOUBLE_EQ(seconds("30s", "--timeout", RealRange::above(0)), 30.0);
  EXPECT_DOUBLE_EQ(seconds("500ms", "--timeout", RealRange::above(0)), 0.5);
  EXPECT_DOUBLE_EQ(seconds("2min", "--timeout", RealRange::above(0)), 120.0);
  EXPECT_DOUBLE_EQ(seconds("1h", "--timeout", RealRange::above(0)), 3600.0);
  EXPECT_DOUBLE_EQ(seconds("0", "--min-time", RealRange::at_least(0)), 0.0);
  for (const char* bad : {"nan", "inf", "-1", "0", "5d", "", "1e400", "3 s"})
    expect_refused([&] { seconds(bad, "--timeout", RealRange::above(0)); }, "--timeout", bad);
  expect_refused(
      [] {
        seconds("2h", "--timeout", RealRange{0, 3600, true, false});
      },
      "--timeout", "2h");
}

TEST(ParseExactText, ReadsBackToTheSameDouble) {
  for (double v : {0.05, 1.0 / 3.0, 1e-300, 12345.678})
    EXPECT_EQ(real(exact_text(v), "x", RealRange{}), v);
}

}  // namespace
}  // namespace hb::parse
