// Fuzzes the sequence-length and token-count parsers behind --seq-len (bench/sweep_spec.h):
// "4k", "4k,16k", "4k:128k:x2", "1k:8k:+1k". A list that parses must be sorted, unique and
// positive-or-zero lengths.
#include <cstdint>
#include <cstdlib>

#include "core/error.h"
#include "bench/sweep_spec.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = hb::fuzz::as_text(data, size);
  try {
    hb::bench::parse_token_count(text);
  } catch (const hb::Error&) {
  }
  try {
    const std::vector<int64_t> lens = hb::bench::parse_seq_lens(text);
    for (size_t i = 0; i < lens.size(); ++i)
      if (lens[i] < 0 || (i && lens[i] <= lens[i - 1])) std::abort();
  } catch (const hb::Error&) {
  }
  return 0;
}
