// --seq-len parsing (reports/run/sweep_spec.h) on inputs found by tests/fuzz/fuzz_seq_lens.
// Each was a crash or an "internal error"; now each is an hb::Error (exit 2) naming the input.
#include <gtest/gtest.h>

#include "core/error.h"
#include "reports/run/sweep_spec.h"

using namespace hb::run;

// "1:100000:x?": std::stod threw std::invalid_argument, which the CLI reports as an internal
// error; trailing junk after the factor ("x2junk") was ignored.
TEST(SeqLenParse, FactorMustBeAWholeFiniteNumber) {
  EXPECT_THROW(parse_seq_lens("1:100000:x?"), hb::Error);
  EXPECT_THROW(parse_seq_lens("1k:8k:xabc"), hb::Error);
  EXPECT_THROW(parse_seq_lens("1k:8k:x2junk"), hb::Error);
  EXPECT_THROW(parse_seq_lens("1k:8k:xinf"), hb::Error);
  EXPECT_EQ(parse_seq_lens("1k:4k:x2.0"), (std::vector<int64_t>{1024, 2048, 4096}));
}

// "2k:44444444444444447k:+2k": 44444444444444447 x 1024 overflowed int64_t (undefined behaviour,
// reported by UBSan in the sanitizer build; a wrapped value in a normal one).
TEST(SeqLenParse, SuffixThatOverflowsIsRefused) {
  EXPECT_THROW(parse_token_count("44444444444444447k"), hb::Error);
  EXPECT_THROW(parse_token_count("9223372036854775807m"), hb::Error);
  EXPECT_EQ(parse_token_count("8796093022207m"), int64_t{8796093022207} * 1024 * 1024);
}
