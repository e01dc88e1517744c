// --seq-len parsing (bench/sweep_spec.h) on inputs found by tests/fuzz/fuzz_seq_lens.
// Each was a crash or an "internal error"; now each is an hb::Error (exit 2) naming the input.
#include <gtest/gtest.h>

#include "core/error.h"
#include "bench/sweep_spec.h"

using namespace hb::bench;

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
  EXPECT_EQ(parse_token_count("1048576m"), int64_t{1} << 40);  // the largest length a sweep takes
  EXPECT_THROW(parse_token_count("1048577m"), hb::Error);
}

// Issue 14 (5), the inputs a fuzz run can stumble on at any time: "1:1000000000000:+1" built
// points until memory ran out, "1:9223372036854775807:+4611686018427387904" overflowed `v += inc`
// and never ended, and a geometric range up to INT64_MAX rounded its last point past int64_t.
// Points are now counted before they are built.
TEST(SeqLenParse, RangesAreCountedBeforeTheyAreBuilt) {
  EXPECT_THROW(parse_seq_lens("1:1000000000000:+1"), hb::Error);
  EXPECT_THROW(parse_seq_lens("1:8m:+1"), hb::Error);
  EXPECT_THROW(parse_seq_lens("1:1000000:x1.0000001"), hb::Error);
  // Lengths past 2^40 tokens (kMaxTokens) are refused before any stepping could overflow.
  EXPECT_THROW(parse_seq_lens("1:9223372036854775807:+4611686018427387904"), hb::Error);
  EXPECT_THROW(parse_seq_lens("4611686018427387904:9223372036854775807:x2"), hb::Error);
  EXPECT_EQ(parse_seq_lens("1:1048576m:+549755813888"), (std::vector<int64_t>{1, 549755813889}));
  EXPECT_EQ(parse_seq_lens("549755813888:1048576m:x2").back(), int64_t{1} << 40);
  EXPECT_EQ(parse_seq_lens("1:10000:+1").size(), 10000u);
  EXPECT_EQ(parse_seq_lens("1k:3k:+1k"), (std::vector<int64_t>{1024, 2048, 3072}));
}
