// Fuzzes the Hugging Face config.json reader (`run --model PATH`, bench/model_config.h): the text
// parsed as a config, and through the file reader (size and regular-file checks, naming). A model
// it accepts must have a shape the kernels take and weight sizes that do not overflow.
#include <cstdint>
#include <cstdlib>

#include "bench/model_config.h"
#include "core/error.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const hb::ModelPreset m =
        hb::bench::parse_model_config(hb::fuzz::as_text(data, size), "fuzz.json", "fuzz");
    m.shape.validate();
    if (hb::model_weight_bytes(m) <= 0 || hb::lm_head_weight_bytes(m) <= 0 ||
        hb::decode_activation_bytes(m, 64) <= 0)
      std::abort();
  } catch (const hb::Error&) {
  }
  try {
    hb::bench::read_model_config(hb::fuzz::as_file(data, size, ".json"));
  } catch (const hb::Error&) {
  }
  return 0;
}
