// Fuzzes the report reader (reports::from_json_text: JSON, then the schema check) that `report`,
// `compare` and `run --resume`-style readers go through. A report that reads back is written
// and read again: the writer must accept what the reader accepted.
#include <cstdint>

#include "core/error.h"
#include "reports/json_io.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const hb::reports::Report r =
        hb::reports::from_json_text(hb::fuzz::as_text(data, size), "fuzz.json");
    hb::reports::from_json_text(hb::reports::to_json_text(r), "fuzz-roundtrip.json");
  } catch (const hb::Error&) {
  }
  return 0;
}
