// Fuzzes the sweep journal reader (bench::read_journal, `run --resume`): the header line, the
// unit lines and each journaled point through the report's point reader and its range checks.
// A journal is a file the user may have copied, edited or cut short; a bad one is an hb::Error.
#include <cstdint>

#include "bench/journal.h"
#include "core/error.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    hb::bench::read_journal(hb::fuzz::as_file(data, size, ".partial.jsonl"));
  } catch (const hb::Error&) {
  }
  return 0;
}
