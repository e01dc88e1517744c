// Fuzzes the platform-profile readers: memtier's "hybridbench.platform/1" reader (`--platform
// FILE` in measure mode, memtier/profile.h) and the projection model's reader on top of it
// (`run --mode model --platform FILE`, model/platform_model.h), complete or not.
#include <cstdint>

#include "core/error.h"
#include "memtier/profile.h"
#include "model/platform_model.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = hb::fuzz::as_text(data, size);
  try {
    hb::memtier::parse_platform_profile(text, "fuzz.json");
  } catch (const hb::Error&) {
  }
  try {
    hb::model::parse_platform_model(text, "fuzz.json", /*require_complete=*/false);
  } catch (const hb::Error&) {
  }
  try {
    hb::model::parse_platform_model(text, "fuzz.json", /*require_complete=*/true);
  } catch (const hb::Error&) {
  }
  return 0;
}
