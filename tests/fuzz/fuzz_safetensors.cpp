// Fuzzes the safetensors trace reader (`run --workload trace:FILE`, bench/trace.h): the
// header check, then loading the tensors for the shape the header declares. hb::Error is the
// reader's answer to bad input; anything else escaping (a crash, a sanitizer report, another
// exception: the CLI's "internal error") is a finding.
#include <algorithm>
#include <cstdint>

#include "core/error.h"
#include "bench/trace.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = hb::fuzz::as_file(data, size, ".safetensors");
  try {
    const hb::bench::TraceInfo info = hb::bench::inspect_trace(path);
    hb::bench::trace_model_preset(path);  // the trace's own model (run without --model)
    hb::AttentionShape shape;
    shape.q_heads = info.q_heads;
    shape.kv_heads = info.kv_heads;
    shape.head_dim = info.head_dim;
    // Both ways a sweep asks for tokens: the whole trace (seq_len 0) and a short prefix.
    hb::bench::load_trace_workload(path, shape, 0, 24);
    hb::bench::load_trace_workload(path, shape, std::min<int64_t>(info.tokens, 4), 2);
  } catch (const hb::Error&) {
  }
  return 0;
}
