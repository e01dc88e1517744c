#include "reports/run/trace.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace hb::run {

namespace {

struct TensorEntry {
  std::string dtype;
  std::vector<int64_t> shape;
  int64_t begin = 0, end = 0;  // byte offsets into the data section
};

struct Header {
  std::map<std::string, TensorEntry> tensors;
  int64_t data_start = 0, data_bytes = 0;
};

[[noreturn]] void bad(const std::string& path, const std::string& what) {
  throw Error("trace file '" + path + "' is not a valid safetensors trace: " + what,
              "write it with safetensors (tensors k, v [tokens, kv_heads, head_dim] and q [steps, q_heads, head_dim], "
              "dtype F16/BF16/F32); see reports/README.md");
}

size_t elem_size(const std::string& dt) { return dt == "F32" ? 4 : 2; }

Header read_header(const std::string& path) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) throw Error("cannot open trace file '" + path + "'", "check the path given to --workload trace:FILE");
  const int64_t file_size = static_cast<int64_t>(f.tellg());
  if (file_size < 8) bad(path, "file is shorter than the 8-byte header length");
  f.seekg(0);
  uint8_t len_bytes[8];
  f.read(reinterpret_cast<char*>(len_bytes), 8);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | len_bytes[i];  // little-endian u64
  if (n == 0 || n > 100u << 20 || static_cast<int64_t>(n) > file_size - 8)
    bad(path, "header length " + std::to_string(n) + " does not fit the file (" + std::to_string(file_size) + " bytes)");
  std::string text(n, '\0');
  f.read(text.data(), static_cast<std::streamsize>(n));
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    bad(path, std::string("header is not JSON (") + e.what() + ")");
  }
  if (!j.is_object()) bad(path, "header is not a JSON object");
  Header h;
  h.data_start = 8 + static_cast<int64_t>(n);
  h.data_bytes = file_size - h.data_start;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() == "__metadata__") continue;
    const auto& e = it.value();
    if (!e.is_object() || !e.contains("dtype") || !e.contains("shape") || !e.contains("data_offsets"))
      bad(path, "tensor '" + it.key() + "' lacks dtype, shape or data_offsets");
    TensorEntry t;
    try {
      t.dtype = e.at("dtype").get<std::string>();
      t.shape = e.at("shape").get<std::vector<int64_t>>();
      auto off = e.at("data_offsets").get<std::vector<int64_t>>();
      if (off.size() != 2) bad(path, "tensor '" + it.key() + "' data_offsets must have two entries");
      t.begin = off[0];
      t.end = off[1];
    } catch (const nlohmann::json::exception&) {
      bad(path, "tensor '" + it.key() + "' has fields of the wrong type");
    }
    h.tensors[it.key()] = t;
  }
  // Offsets inside the data section, sizes consistent with dtype x shape, no overlaps.
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (const auto& [name, t] : h.tensors) {
    if (name != "k" && name != "v" && name != "q" && name != "prompt_q") continue;
    if (t.dtype != "F16" && t.dtype != "BF16" && t.dtype != "F32")
      bad(path, "tensor '" + name + "' has dtype " + t.dtype + " (only F16, BF16, F32 are supported)");
    if (t.shape.size() != 3) bad(path, "tensor '" + name + "' must have 3 dimensions");
    int64_t numel = 1;
    for (int64_t d : t.shape) {
      if (d < 0 || d > (1LL << 31)) bad(path, "tensor '" + name + "' has an impossible dimension");
      numel *= d;
    }
    if (t.begin < 0 || t.end < t.begin || t.end > h.data_bytes)
      bad(path, "tensor '" + name + "' data_offsets lie outside the file");
    if (t.end - t.begin != numel * static_cast<int64_t>(elem_size(t.dtype)))
      bad(path, "tensor '" + name + "' byte size does not match its shape and dtype");
    ranges.emplace_back(t.begin, t.end);
  }
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i)
    if (ranges[i].first < ranges[i - 1].second) bad(path, "tensors overlap in the data section");
  for (const char* need : {"k", "v", "q"})
    if (!h.tensors.count(need)) bad(path, std::string("tensor '") + need + "' is missing");
  return h;
}

TraceInfo info_of(const Header& h, const std::string& path) {
  const auto& k = h.tensors.at("k");
  const auto& v = h.tensors.at("v");
  const auto& q = h.tensors.at("q");
  if (k.shape != v.shape) bad(path, "k and v shapes differ");
  if (q.shape[2] != k.shape[2]) bad(path, "q head_dim differs from k head_dim");
  TraceInfo i{k.shape[0], q.shape[0], static_cast<int>(q.shape[1]), static_cast<int>(k.shape[1]),
              static_cast<int>(k.shape[2]), k.dtype};
  if (i.kv_heads <= 0 || i.q_heads <= 0 || i.head_dim <= 0 || i.q_heads % i.kv_heads != 0)
    bad(path, "q heads (" + std::to_string(i.q_heads) + ") are not a positive multiple of kv heads (" +
                  std::to_string(i.kv_heads) + ")");
  if (i.steps < 1) bad(path, "q has no decode steps");
  if (i.steps > i.tokens) bad(path, "q has more steps than k has tokens");
  if (h.tensors.count("prompt_q") && (h.tensors.at("prompt_q").shape[1] != i.q_heads ||
                                      h.tensors.at("prompt_q").shape[2] != i.head_dim))
    bad(path, "prompt_q shape does not match q");
  return i;
}

std::vector<float> read_tensor(std::ifstream& f, const Header& h, const TensorEntry& t) {
  const int64_t n = (t.end - t.begin) / static_cast<int64_t>(elem_size(t.dtype));
  std::vector<uint8_t> raw(static_cast<size_t>(t.end - t.begin));
  f.seekg(h.data_start + t.begin);
  f.read(reinterpret_cast<char*>(raw.data()), static_cast<std::streamsize>(raw.size()));
  std::vector<float> out(static_cast<size_t>(n));
  const DType dt = t.dtype == "F32" ? DType::f32 : t.dtype == "F16" ? DType::f16 : DType::bf16;
  convert_to_fp32(dt, raw.data(), out.data(), static_cast<size_t>(n));
  return out;
}

}  // namespace

TraceInfo inspect_trace(const std::string& path) {
  const Header h = read_header(path);
  return info_of(h, path);
}

Workload load_trace_workload(const std::string& path, const AttentionShape& shape, int64_t seq_len, int max_steps) {
  const Header h = read_header(path);
  const TraceInfo info = info_of(h, path);
  if (info.q_heads != shape.q_heads || info.kv_heads != shape.kv_heads || info.head_dim != shape.head_dim)
    throw Error("trace '" + path + "' has attention shape " + std::to_string(info.q_heads) + "q/" +
                    std::to_string(info.kv_heads) + "kv x" + std::to_string(info.head_dim) + " but the model is " +
                    shape.to_string(),
                "pick the --model whose shape matches the trace");
  if (seq_len <= 0) seq_len = info.tokens - info.steps;
  const int64_t steps = std::min<int64_t>(info.steps, max_steps);
  if (seq_len + steps > info.tokens)
    throw Error("trace '" + path + "' has " + std::to_string(info.tokens) + " tokens; sequence length " +
                    std::to_string(seq_len) + " plus " + std::to_string(steps) + " decode steps does not fit",
                "use --seq-len <= " + std::to_string(info.tokens - steps));
  std::ifstream f(path, std::ios::binary);
  auto k = read_tensor(f, h, h.tensors.at("k"));
  auto v = read_tensor(f, h, h.tensors.at("v"));
  auto q = read_tensor(f, h, h.tensors.at("q"));
  round_through(shape.kv_dtype, k.data(), k.size());
  round_through(shape.kv_dtype, v.data(), v.size());

  Workload w;
  w.shape = shape;
  w.spec.kind = WorkloadSpec::Kind::structured;
  w.source = "trace:" + path;
  const size_t row = static_cast<size_t>(shape.kv_heads) * shape.head_dim;
  const size_t qrow = static_cast<size_t>(shape.q_heads) * shape.head_dim;
  w.prompt.tokens = seq_len;
  w.prompt.kv_heads = shape.kv_heads;
  w.prompt.head_dim = shape.head_dim;
  w.prompt.k.assign(k.begin(), k.begin() + static_cast<int64_t>(seq_len * row));
  w.prompt.v.assign(v.begin(), v.begin() + static_cast<int64_t>(seq_len * row));
  for (int64_t s = 0; s < steps; ++s) {
    DecodeStep st;
    const int64_t t = seq_len + s;
    st.k.assign(k.begin() + static_cast<int64_t>(t * row), k.begin() + static_cast<int64_t>((t + 1) * row));
    st.v.assign(v.begin() + static_cast<int64_t>(t * row), v.begin() + static_cast<int64_t>((t + 1) * row));
    st.q.assign(q.begin() + static_cast<int64_t>(s * qrow), q.begin() + static_cast<int64_t>((s + 1) * qrow));
    w.steps.push_back(std::move(st));
  }
  if (h.tensors.count("prompt_q")) w.prompt_queries = read_tensor(f, h, h.tensors.at("prompt_q"));
  return w;
}

}  // namespace hb::run
