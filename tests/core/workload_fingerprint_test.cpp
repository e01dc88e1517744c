// Every synthetic workload family pinned to the bit: a fingerprint of all its numbers (keys,
// values, queries, needle) for one seed and shape. Reports on the same seed must not change when
// the generators are restructured; a deliberate change of a generator updates these numbers in
// the same commit, with the reason.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "core/workload.h"

namespace hb {
namespace {

// FNV-1a over the bytes of each array in turn, with each array's length mixed in.
struct Fingerprint {
  uint64_t h = 1469598103934665603ull;
  void bytes(const void* p, size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  }
  void value(int64_t v) { bytes(&v, sizeof v); }
  void floats(std::span<const float> v) {
    value(static_cast<int64_t>(v.size()));
    bytes(v.data(), v.size() * sizeof(float));
  }
};

uint64_t fingerprint(const Workload& w) {
  Fingerprint f;
  f.floats(w.prompt.k);
  f.floats(w.prompt.v);
  f.floats(w.prompt_queries);
  for (const auto& s : w.steps) {
    f.floats(s.k);
    f.floats(s.v);
    f.floats(s.q);
  }
  f.value(w.needle_token);
  f.value(w.needle_tokens);
  f.floats(w.needle_value);
  return f.h;
}

uint64_t fingerprint_of(const std::string& spec, const AttentionShape& shape, int64_t prompt,
                        int steps) {
  return fingerprint(make_workload(shape, prompt, steps, parse_workload_spec(spec)));
}

TEST(WorkloadFingerprint, EachFamilyIsPinnedToTheBit) {
  const AttentionShape gqa{8, 2, 64, DType::f16};
  const AttentionShape tiny{4, 4, 16, DType::f32};  // few features fit: the layout shrinks
  struct Case {
    const char* spec;
    AttentionShape shape;
    int64_t prompt;
    int steps;
    uint64_t want;
  };
  const Case cases[] = {
      {"llama-like", gqa, 700, 3, 11776340609904448ull},
      {"llama-like:sink_mass=0.4,drift=0.2", gqa, 300, 2, 5824997029587893098ull},
      {"llama-like", tiny, 200, 2, 15189634615286846055ull},
      {"needle", gqa, 500, 2, 6178906275352854114ull},
      {"diffuse", gqa, 600, 3, 6151836985398146983ull},
      {"diffuse", tiny, 120, 2, 4163588706324769604ull},
      {"diffuse:needle=1", gqa, 400, 2, 8883816540661647554ull},
      {"uniform", gqa, 256, 2, 3409259962567033528ull},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.spec) + " " + c.shape.to_string());
    EXPECT_EQ(fingerprint_of(c.spec, c.shape, c.prompt, c.steps), c.want);
  }
}

}  // namespace
}  // namespace hb
