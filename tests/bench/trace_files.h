#pragma once
// Small safetensors files for the trace tests: a valid trace of a chosen size (values from a
// seeded RNG, so every row is distinct), with hooks to plant NaN/Inf or craft a header.
#include <cmath>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/dtype.h"
#include "core/rng.h"

namespace hb::bench::testing {

struct TensorData {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<float> values;  // row-major
};

// Writes `tensors` as safetensors (F16 when f16, else F32), data in the order given.
inline void write_safetensors(const std::string& path, const std::vector<TensorData>& tensors,
                              bool f16 = true,
                              const nlohmann::ordered_json& metadata = nlohmann::ordered_json()) {
  nlohmann::ordered_json h = nlohmann::ordered_json::object();
  if (!metadata.is_null()) h["__metadata__"] = metadata;
  std::string data;
  for (const auto& t : tensors) {
    const size_t begin = data.size();
    for (float x : t.values) {
      if (f16) {
        const uint16_t b = fp32_to_fp16(x);
        data.append(reinterpret_cast<const char*>(&b), 2);
      } else {
        data.append(reinterpret_cast<const char*>(&x), 4);
      }
    }
    h[t.name] = {
        {"dtype", f16 ? "F16" : "F32"}, {"shape", t.shape}, {"data_offsets", {begin, data.size()}}};
  }
  const std::string text = h.dump();
  std::ofstream out(path, std::ios::binary);
  const uint64_t n = text.size();
  for (int i = 0; i < 8; ++i) out.put(static_cast<char>((n >> (8 * i)) & 0xff));
  out << text << data;
}

// A header written as given, followed by `data_bytes` zero bytes (for crafted, invalid headers).
inline void write_raw_safetensors(const std::string& path, const std::string& header,
                                  size_t data_bytes) {
  std::ofstream out(path, std::ios::binary);
  const uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out.put(static_cast<char>((n >> (8 * i)) & 0xff));
  out << header << std::string(data_bytes, '\0');
}

// The tensors of a trace, by default of qwen2.5-0.5b's attention shape (14 q heads, 2 KV heads,
// d 64): k, v [tokens, kv_heads, d], q [steps, q_heads, d] and, when prompt_q_rows > 0, prompt_q.
struct TraceTensors {
  static constexpr int kQHeads = 14, kKvHeads = 2, kHeadDim = 64;
  TensorData k, v, q, prompt_q;
  TraceTensors(int64_t tokens, int64_t steps, int64_t prompt_q_rows = 0, uint64_t seed = 7,
               int q_heads = kQHeads, int kv_heads = kKvHeads, int head_dim = kHeadDim) {
    Rng rng(seed);
    auto fill = [&](TensorData& t, const char* name, int64_t rows, int heads) {
      t.name = name;
      t.shape = {rows, heads, head_dim};
      t.values.resize(static_cast<size_t>(rows) * heads * head_dim);
      for (auto& x : t.values) x = rng.normal();
    };
    fill(k, "k", tokens, kv_heads);
    fill(v, "v", tokens, kv_heads);
    fill(q, "q", steps, q_heads);
    if (prompt_q_rows > 0) fill(prompt_q, "prompt_q", prompt_q_rows, q_heads);
  }
  std::vector<TensorData> all() const {
    std::vector<TensorData> out = {k, v, q};
    if (!prompt_q.name.empty()) out.push_back(prompt_q);
    return out;
  }
  void write(const std::string& path, bool f16 = true) const {
    write_safetensors(path, all(), f16);
  }
};

}  // namespace hb::bench::testing
