#include "bench/trace.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/dtype.h"
#include "core/error.h"
#include "core/model_presets.h"

namespace hb::bench {

namespace {

const char* kLayoutFix =
    "write it with safetensors: k, v [tokens, kv_heads, head_dim], q [steps, q_heads, head_dim], "
    "optional prompt_q "
    "[n <= tokens - steps, q_heads, head_dim] and o [steps, q_heads, head_dim], dtype "
    "F16/BF16/F32 (reports/README.md; scripts/capture-trace.py writes them)";

[[noreturn]] void bad(const std::string& path, const std::string& what) {
  throw Error("trace file '" + path + "' is not a valid trace: " + what, kLayoutFix);
}

// Labels of the dimensions in NaN/Inf errors.
const std::vector<std::string> kKvDims = {"token", "kv_head", "element"};
const std::vector<std::string> kQDims = {"step", "head", "element"};
const std::vector<std::string> kPromptQDims = {"row", "head", "element"};
const std::vector<std::string> kODims = {"step", "head", "element"};

// A traced head scores the needle where the exact attention gives the span a tenth of its mass
// (Workload::needle_min_mass): retrieval heads, as needle-in-a-haystack studies single them out.
constexpr double kTraceNeedleMinMass = 0.1;

// Rows converted per read while scanning: bounds the scan's memory at 4 MiB of floats.
constexpr int64_t kScanElems = 1 << 20;

const SafetensorsTensor& trace_tensor(const SafetensorsFile& f, const std::string& name,
                                      bool required = true) {
  static const SafetensorsTensor none;
  const SafetensorsTensor* t = f.find(name);
  if (!t) {
    if (required) bad(f.path(), "tensor '" + name + "' is missing");
    return none;
  }
  if (t->dtype != "F16" && t->dtype != "BF16" && t->dtype != "F32")
    bad(f.path(),
        "tensor '" + name + "' has dtype " + t->dtype + " (only F16, BF16, F32 are supported)");
  if (t->shape.size() != 3) bad(f.path(), "tensor '" + name + "' must have 3 dimensions");
  for (int64_t d : {t->shape[1], t->shape[2]})
    if (d <= 0 || d > (1 << 20))
      bad(f.path(), "tensor '" + name + "' has an impossible head count or head_dim");
  return *t;
}

// A whole non-negative decimal integer from the metadata's string value, or -1.
int64_t metadata_integer(const nlohmann::json& meta, const char* key) {
  const auto it = meta.find(key);
  if (it == meta.end()) return -1;
  const std::string text = it->is_string() ? it->get<std::string>() : it->dump();
  if (text.empty() || text.size() > 18 ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return -2;
  return std::stoll(text);
}

// The planted needle span from __metadata__ (needle_token, needle_tokens), checked against the
// trace's prompt: both or neither, a span of at least one token inside the prompt.
void read_needle(const SafetensorsFile& f, TraceInfo& i) {
  const auto header = nlohmann::json::parse(f.header_text(), nullptr, false);
  if (header.is_discarded() || !header.contains("__metadata__")) return;
  const auto& meta = header["__metadata__"];
  if (!meta.is_object()) return;
  const int64_t first = metadata_integer(meta, "needle_token"),
                count = metadata_integer(meta, "needle_tokens");
  if (first == -1 && count == -1) return;
  if (first < 0 || count < 1 || first + count > i.prompt_tokens())
    throw Error("trace file '" + f.path() + "' names a needle span (__metadata__ needle_token " +
                    (first < 0 ? std::string("missing or not an integer") : std::to_string(first)) +
                    ", needle_tokens " +
                    (count < 0 ? std::string("missing or not an integer") : std::to_string(count)) +
                    ") that is not a span of at least one token inside its prompt of " +
                    std::to_string(i.prompt_tokens()) + " tokens",
                "give both as decimal strings with needle_token + needle_tokens <= the prompt's "
                "tokens (scripts/capture-trace.py --needle writes them), or remove both");
  i.needle_token = first;
  i.needle_tokens = count;
}

TraceInfo info_of(const SafetensorsFile& f) {
  const std::string& path = f.path();
  const auto& k = trace_tensor(f, "k");
  const auto& v = trace_tensor(f, "v");
  const auto& q = trace_tensor(f, "q");
  if (k.shape != v.shape) bad(path, "k and v shapes differ");
  if (q.shape[2] != k.shape[2]) bad(path, "q head_dim differs from k head_dim");
  TraceInfo i;
  i.tokens = k.shape[0];
  i.steps = q.shape[0];
  i.q_heads = static_cast<int>(q.shape[1]);
  i.kv_heads = static_cast<int>(k.shape[1]);
  i.head_dim = static_cast<int>(k.shape[2]);
  i.dtype = k.dtype;
  if (i.q_heads % i.kv_heads != 0)
    bad(path, "q heads (" + std::to_string(i.q_heads) + ") are not a multiple of kv heads (" +
                  std::to_string(i.kv_heads) + ")");
  if (i.steps < 1) bad(path, "q has no decode steps");
  if (i.steps > i.tokens) bad(path, "q has more steps than k has tokens");
  if (f.find("prompt_q")) {
    const auto& pq = trace_tensor(f, "prompt_q");
    if (pq.shape[1] != i.q_heads || pq.shape[2] != i.head_dim)
      bad(path, "prompt_q shape does not match q");
    i.prompt_queries = pq.shape[0];
    // More prefill queries than prompt positions would have to attend to tokens that come
    // after them (H2O's prefill would silently stop being causal).
    if (i.prompt_queries > i.prompt_tokens())
      bad(path, "prompt_q has " + std::to_string(i.prompt_queries) +
                    " rows but the trace's prompt has only " + std::to_string(i.prompt_tokens()) +
                    " positions (tokens " + std::to_string(i.tokens) + " - decode steps " +
                    std::to_string(i.steps) + ")");
  }
  if (f.find("o")) {
    const auto& o = trace_tensor(f, "o");
    if (o.shape != q.shape) bad(path, "o (the captured outputs) must have q's shape");
    i.captured_outputs = true;
  }
  read_needle(f, i);
  return i;
}

// FNV-1a, 64 bit: a content fingerprint for the identity, not a defence against forgery.
struct Fnv64 {
  uint64_t h = 1469598103934665603ull;
  void add(const void* p, size_t n) {
    for (const auto* b = static_cast<const uint8_t*>(p); n--; ++b) h = (h ^ *b) * 1099511628211ull;
  }
};

std::string identity_of(const SafetensorsFile& f) {
  constexpr int64_t kBlock = 64 << 10, kBlocks = 16;
  Fnv64 fnv;
  const int64_t size = f.file_size();
  fnv.add(&size, sizeof size);
  fnv.add(f.header_text().data(), f.header_text().size());
  const int64_t data = f.data_bytes();
  std::vector<uint8_t> buf(static_cast<size_t>(std::min(data, kBlock)));
  if (data <= kBlock * kBlocks) {
    for (int64_t at = 0; at < data; at += kBlock) {
      const int64_t n = std::min(kBlock, data - at);
      f.read_data(at, buf.data(), n);
      fnv.add(buf.data(), static_cast<size_t>(n));
    }
  } else {
    for (int64_t i = 0; i < kBlocks; ++i) {  // first and last block included
      f.read_data((data - kBlock) * i / (kBlocks - 1), buf.data(), kBlock);
      fnv.add(buf.data(), buf.size());
    }
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(fnv.h));
  return "trace:" + std::filesystem::path(f.path()).filename().string() + "@" + hex;
}

// After rounding through the KV dtype every value must still be finite: a value fp16 cannot
// hold would otherwise reach the cache as Inf.
void check_fits(const std::string& path, const SafetensorsTensor& t, DType dt, const float* rounded,
                int64_t n, int64_t first_token) {
  for (int64_t i = 0; i < n; ++i) {
    if (std::isfinite(rounded[i])) continue;
    const int64_t row = t.row_elems(), d = t.shape[2];
    throw Error("trace file '" + path + "': tensor '" + t.name + "' at [token " +
                    std::to_string(first_token + i / row) + ", kv_head " +
                    std::to_string(i % row / d) + ", element " + std::to_string(i % d) +
                    "] does not fit the KV dtype " + std::string(dtype_name(dt)) +
                    " (it rounds to Inf)",
                "use --kv-dtype bf16 or fp32, or write the trace with values in range");
  }
}

// Reads rows [r0, r1) of t in bounded pieces, so every value is checked (finite, and fits each
// of `kv_dtypes` when given) without holding the rows.
void scan_rows(const SafetensorsFile& f, const SafetensorsTensor& t, int64_t r0, int64_t r1,
               const std::vector<std::string>& dims, const std::set<DType>& kv_dtypes) {
  const int64_t row = t.row_elems();
  const int64_t per = std::max<int64_t>(1, kScanElems / row);
  std::vector<float> buf(static_cast<size_t>(std::min(per, std::max<int64_t>(r1 - r0, 0)) * row)),
      rounded;
  for (int64_t r = r0; r < r1; r += per) {
    const int64_t m = std::min(per, r1 - r);
    f.read_rows_fp32(t, r, r + m, buf.data(), dims);
    for (DType dt : kv_dtypes) {
      if (dt == DType::f32) continue;
      rounded.assign(buf.begin(), buf.begin() + m * row);
      round_through(dt, rounded.data(), rounded.size());
      check_fits(f.path(), t, dt, rounded.data(), m * row, r);
    }
  }
}

}  // namespace

TraceFile::TraceFile(const std::string& path)
    : file_(path), info_(info_of(file_)), identity_(identity_of(file_)) {}

void TraceFile::check_shape(const AttentionShape& shape) const {
  if (info_.q_heads != shape.q_heads || info_.kv_heads != shape.kv_heads ||
      info_.head_dim != shape.head_dim)
    throw Error("trace '" + file_.path() + "' has attention shape " +
                    std::to_string(info_.q_heads) + "q/" + std::to_string(info_.kv_heads) + "kv x" +
                    std::to_string(info_.head_dim) + " but the model is " + shape.to_string(),
                "pick the --model whose shape matches the trace");
}

void TraceFile::check_lengths(int64_t seq_len, int decode_steps) const {
  if (decode_steps < 0) throw Error("negative decode steps", "pass --decode-steps >= 0");
  if (decode_steps > info_.steps)
    throw Error("trace '" + file_.path() + "' has " + std::to_string(info_.steps) +
                    " decode steps (rows of q) but --decode-steps is " +
                    std::to_string(decode_steps),
                "pass --decode-steps " + std::to_string(info_.steps) +
                    " or fewer, or capture more decode steps");
  if (seq_len < 0 || seq_len + decode_steps > info_.tokens)
    throw Error("trace '" + file_.path() + "' has " + std::to_string(info_.tokens) +
                    " tokens; sequence length " + std::to_string(seq_len) + " plus " +
                    std::to_string(decode_steps) + " decode steps does not fit",
                "use --seq-len <= " + std::to_string(info_.tokens - decode_steps));
}

int64_t TraceFile::prompt_queries_for(int64_t seq_len) const {
  // Row i is position P - n + i; the rows below seq_len are the last ones of a seq_len prompt.
  return std::clamp<int64_t>(seq_len - (info_.prompt_tokens() - info_.prompt_queries), 0,
                             info_.prompt_queries);
}

void TraceFile::check_sweep(const SweepSpec& spec) const {
  for (const auto& m : spec.models) check_shape(spec.model(m).shape);
  int64_t longest = 0;
  for (int64_t s : spec.seq_lens) {
    const int64_t n = s <= 0 ? info_.prompt_tokens() : s;
    check_lengths(n, spec.decode_steps);
    longest = std::max(longest, n);
  }
  const std::set<DType> dtypes(spec.kv_dtypes.begin(), spec.kv_dtypes.end());
  scan_rows(file_, *file_.find("k"), 0, longest + spec.decode_steps, kKvDims, dtypes);
  scan_rows(file_, *file_.find("v"), 0, longest + spec.decode_steps, kKvDims, dtypes);
  scan_rows(file_, *file_.find("q"), 0, spec.decode_steps, kQDims, {});
  if (const auto* pq = file_.find("prompt_q"))
    scan_rows(file_, *pq, 0, prompt_queries_for(longest), kPromptQDims, {});
  if (const auto* o = file_.find("o")) scan_rows(file_, *o, 0, spec.decode_steps, kODims, {});
}

Workload TraceFile::workload(const AttentionShape& shape, int64_t seq_len, int decode_steps) const {
  check_shape(shape);
  if (seq_len <= 0) seq_len = info_.prompt_tokens();
  check_lengths(seq_len, decode_steps);
  const auto& k = *file_.find("k");
  const auto& v = *file_.find("v");
  const auto& q = *file_.find("q");
  const size_t row = static_cast<size_t>(shape.kv_heads) * shape.head_dim;
  const size_t qrow = static_cast<size_t>(shape.q_heads) * shape.head_dim;

  Workload w;
  w.shape = shape;
  w.spec.kind = WorkloadSpec::Kind::structured;
  w.source = identity_;
  w.prompt.tokens = seq_len;
  w.prompt.kv_heads = shape.kv_heads;
  w.prompt.head_dim = shape.head_dim;
  // Rows [0, seq_len) are the prompt; [seq_len, seq_len + decode_steps) the steps' new tokens.
  auto read_kv = [&](const SafetensorsTensor& t, int64_t r0, int64_t r1, auto& out) {
    out.resize(static_cast<size_t>(r1 - r0) * row);
    file_.read_rows_fp32(t, r0, r1, out.data(), kKvDims);
    round_through(shape.kv_dtype, out.data(), out.size());
    check_fits(file_.path(), t, shape.kv_dtype, out.data(), static_cast<int64_t>(out.size()), r0);
  };
  read_kv(k, 0, seq_len, w.prompt.k);
  read_kv(v, 0, seq_len, w.prompt.v);
  std::vector<float> nk, nv, nq(static_cast<size_t>(decode_steps) * qrow);
  read_kv(k, seq_len, seq_len + decode_steps, nk);
  read_kv(v, seq_len, seq_len + decode_steps, nv);
  file_.read_rows_fp32(q, 0, decode_steps, nq.data(), kQDims);
  w.steps.resize(static_cast<size_t>(decode_steps));
  for (size_t s = 0; s < w.steps.size(); ++s) {
    w.steps[s].k.assign(nk.begin() + s * row, nk.begin() + (s + 1) * row);
    w.steps[s].v.assign(nv.begin() + s * row, nv.begin() + (s + 1) * row);
    w.steps[s].q.assign(nq.begin() + s * qrow, nq.begin() + (s + 1) * qrow);
  }
  // The traced model's own outputs hold for its own prompt only: a shorter prompt attends less.
  if (info_.captured_outputs && seq_len == info_.prompt_tokens()) {
    std::vector<float> o(static_cast<size_t>(decode_steps) * qrow);
    file_.read_rows_fp32(*file_.find("o"), 0, decode_steps, o.data(), kODims);
    for (size_t s = 0; s < w.steps.size(); ++s)
      w.steps[s].captured_o.assign(o.begin() + s * qrow, o.begin() + (s + 1) * qrow);
  }
  plant_needle(w, seq_len);
  if (const int64_t m = prompt_queries_for(seq_len); m > 0) {
    w.prompt_queries.resize(static_cast<size_t>(m) * qrow);
    file_.read_rows_fp32(*file_.find("prompt_q"), 0, m, w.prompt_queries.data(), kPromptQDims);
  }
  return w;
}

void TraceFile::plant_needle(Workload& w, int64_t seq_len) const {
  if (info_.needle_token < 0 || info_.needle_token + info_.needle_tokens > seq_len) return;
  const int kvh = w.shape.kv_heads, d = w.shape.head_dim;
  w.needle_token = info_.needle_token;
  w.needle_tokens = info_.needle_tokens;
  w.needle_min_mass = kTraceNeedleMinMass;
  w.needle_value.assign(static_cast<size_t>(kvh) * d, 0.0f);
  std::vector<double> span(static_cast<size_t>(kvh) * d), all(span.size());
  for (int64_t t = 0; t < seq_len; ++t) {
    const bool in_span = t >= w.needle_token && t < w.needle_token + w.needle_tokens;
    for (size_t i = 0; i < span.size(); ++i) {
      const double x = w.prompt.v[static_cast<size_t>(t) * span.size() + i];
      all[i] += x;
      if (in_span) span[i] += x;
    }
  }
  for (int h = 0; h < kvh; ++h) {
    double norm2 = 0;
    std::vector<double> dir(static_cast<size_t>(d));
    for (int j = 0; j < d; ++j) {
      const size_t i = static_cast<size_t>(h) * d + j;
      dir[j] =
          span[i] / static_cast<double>(w.needle_tokens) - all[i] / static_cast<double>(seq_len);
      norm2 += dir[j] * dir[j];
    }
    const double inv = norm2 > 0 ? 1 / std::sqrt(norm2) : 0;  // a span like the rest: no trials
    for (int j = 0; j < d; ++j)
      w.needle_value[static_cast<size_t>(h) * d + j] = static_cast<float>(dir[j] * inv);
  }
}

TraceInfo inspect_trace(const std::string& path) { return info_of(SafetensorsFile(path)); }

ModelPreset trace_model_preset(const TraceFile& trace) {
  const TraceInfo& info = trace.info();
  const std::string& path = trace.path();
  std::string name = std::filesystem::path(path).filename().string();
  if (const std::string ext = ".safetensors";
      name.size() > ext.size() && name.compare(name.size() - ext.size(), ext.size(), ext) == 0)
    name.resize(name.size() - ext.size());
  ModelPreset m;
  m.name = "trace:" + name;
  m.family = ModelFamily::trace;
  m.max_context = static_cast<int>(std::min<int64_t>(info.tokens, 1 << 30));
  m.shape.q_heads = info.q_heads;
  m.shape.kv_heads = info.kv_heads;
  m.shape.head_dim = info.head_dim;
  m.shape.kv_dtype = info.dtype == "BF16"  ? DType::bf16
                     : info.dtype == "F32" ? DType::f32
                                           : DType::f16;
  try {
    m.shape.validate();
  } catch (const Error& e) {
    throw Error("trace '" + path + "' has an attention shape hybridbench cannot run: " + e.what(),
                e.fix());
  }
  m.source = "the trace's own tensors (" + path + ")";
  return m;
}

ModelPreset trace_model_preset(const std::string& path) {
  return trace_model_preset(TraceFile(path));
}

std::string adopt_trace_model(SweepSpec& spec, const TraceFile* trace, bool model_given,
                              bool kv_dtype_given, bool scope_given) {
  if (model_given || !trace) return "";
  const ModelPreset m = trace_model_preset(*trace);
  spec.own_models = {m};
  spec.models = {m.name};
  std::string note = "note: no --model given: running the trace's own attention shape " +
                     m.shape.to_string() + " as model " + m.name;
  if (!kv_dtype_given) spec.kv_dtypes = {m.shape.kv_dtype};
  if (!scope_given && spec.scope == Scope::layer) {
    spec.scope = Scope::attention;
    note +=
        "; a trace has no layer dimensions, so each step times attention alone (--scope "
        "attention); pass --model PRESET of the same shape to time the whole layer";
  }
  return note + "\n";
}

Workload load_trace_workload(const std::string& path, const AttentionShape& shape, int64_t seq_len,
                             int decode_steps) {
  return TraceFile(path).workload(shape, seq_len, decode_steps);
}

}  // namespace hb::bench
