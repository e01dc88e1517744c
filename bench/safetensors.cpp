#include "bench/safetensors.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>

#include <nlohmann/json.hpp>

#include "core/dtype.h"
#include "core/error.h"
#include "core/json_text.h"

namespace hb::bench {

namespace {

// The header may not be larger than this (safetensors' own limit is 100 MB).
constexpr uint64_t kMaxHeaderBytes = 100u << 20;
// Raw bytes converted per pread: bounds the staging memory of any read.
constexpr int64_t kChunkBytes = 1 << 20;

const char* kFix =
    "write it with safetensors (each tensor: dtype, shape, data_offsets inside the file); "
    "the trace layout is in reports/README.md";

[[noreturn]] void bad(const std::string& name, const std::string& what) {
  throw Error("'" + name + "' is not a valid safetensors file: " + what, kFix);
}

int64_t dtype_bytes(const std::string& dt) {
  static const std::map<std::string, int64_t> sizes = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1},
      {"I16", 2},  {"U16", 2}, {"F16", 2}, {"BF16", 2},    {"I32", 4},
      {"U32", 4},  {"F32", 4}, {"F64", 8}, {"I64", 8},     {"U64", 8}};
  const auto it = sizes.find(dt);
  return it == sizes.end() ? 0 : it->second;
}

// A JSON integer that fits int64 and is >= 0 (a float, a negative number or 2^64-1 is refused,
// where a plain get<int64_t>() would truncate or wrap it).
int64_t non_negative(const nlohmann::json& v, const std::string& name, const std::string& what) {
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      bad(name, what + " " + std::to_string(u) + " does not fit a 64-bit signed integer");
    return static_cast<int64_t>(u);
  }
  if (v.is_number_integer()) {
    const int64_t i = v.get<int64_t>();
    if (i < 0) bad(name, what + " is negative (" + std::to_string(i) + ")");
    return i;
  }
  bad(name, what + " is not an integer (" +
                v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + ")");
}

std::string index_text(const SafetensorsTensor& t, int64_t flat,
                       const std::vector<std::string>& dim_names) {
  std::vector<int64_t> idx(t.shape.size());
  for (size_t d = t.shape.size(); d-- > 0;) {
    idx[d] = t.shape[d] ? flat % t.shape[d] : 0;
    flat = t.shape[d] ? flat / t.shape[d] : 0;
  }
  std::string s;
  for (size_t d = 0; d < idx.size(); ++d) {
    if (!s.empty()) s += ", ";
    if (d < dim_names.size()) s += dim_names[d] + " ";
    s += std::to_string(idx[d]);
  }
  return s;
}

}  // namespace

int64_t SafetensorsTensor::row_elems() const {
  int64_t n = 1;
  for (size_t d = 1; d < shape.size(); ++d) n *= shape[d];  // no overflow: numel was checked
  return n;
}

std::map<std::string, SafetensorsTensor> parse_safetensors_header(std::string_view json,
                                                                  int64_t data_bytes,
                                                                  const std::string& name) {
  nlohmann::json j;
  try {
    j = parse_json_text<nlohmann::json>(json);
  } catch (const std::exception& e) {
    bad(name, std::string("header is not JSON (") + e.what() + ")");
  }
  if (!j.is_object()) bad(name, "header is not a JSON object");
  std::map<std::string, SafetensorsTensor> out;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() == "__metadata__") {  // the format's free-form string map
      if (!it.value().is_object()) bad(name, "__metadata__ is not an object of strings");
      for (const auto& [key, value] : it.value().items())
        if (!value.is_string())
          bad(name, "__metadata__ member '" + key + "' is not a string (the format's values are)");
      continue;
    }
    const auto& e = it.value();
    const std::string tn = "tensor '" + it.key() + "'";
    if (!e.is_object() || !e.contains("dtype") || !e.contains("shape") ||
        !e.contains("data_offsets"))
      bad(name, tn + " lacks dtype, shape or data_offsets");
    SafetensorsTensor t;
    t.name = it.key();
    if (!e.at("dtype").is_string()) bad(name, tn + " dtype is not a string");
    t.dtype = e.at("dtype").get<std::string>();
    t.elem_bytes = dtype_bytes(t.dtype);
    if (t.elem_bytes == 0) bad(name, tn + " has unknown dtype '" + t.dtype + "'");
    if (!e.at("shape").is_array()) bad(name, tn + " shape is not an array");
    t.numel = 1;
    bool overflow = false;
    for (const auto& d : e.at("shape")) {
      t.shape.push_back(non_negative(d, name, tn + " dimension"));
      overflow = overflow || __builtin_mul_overflow(t.numel, t.shape.back(), &t.numel);
    }
    int64_t bytes = 0;
    if (overflow || __builtin_mul_overflow(t.numel, t.elem_bytes, &bytes)) {
      std::string dims;
      for (int64_t d : t.shape) dims += (dims.empty() ? "" : ", ") + std::to_string(d);
      bad(name, tn + " shape [" + dims +
                    "] has an element or byte count that overflows a 64-bit integer");
    }
    const auto& off = e.at("data_offsets");
    if (!off.is_array() || off.size() != 2) bad(name, tn + " data_offsets must have two entries");
    t.begin = non_negative(off[0], name, tn + " data_offsets[0]");
    t.end = non_negative(off[1], name, tn + " data_offsets[1]");
    if (t.end < t.begin || t.end > data_bytes)
      bad(name, tn + " data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) +
                    ") lie outside the data section (" + std::to_string(data_bytes) + " bytes)");
    if (t.end - t.begin != bytes)
      bad(name, tn + " holds " + std::to_string(t.end - t.begin) +
                    " bytes but its shape and dtype need " + std::to_string(bytes));
    const std::string key = t.name;
    out[key] = std::move(t);
  }
  std::vector<const SafetensorsTensor*> by_offset;
  for (const auto& [n, t] : out)
    if (t.end > t.begin) by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(),
            [](auto* a, auto* b) { return a->begin < b->begin; });
  for (size_t i = 1; i < by_offset.size(); ++i)
    if (by_offset[i]->begin < by_offset[i - 1]->end)
      bad(name, "tensors '" + by_offset[i - 1]->name + "' and '" + by_offset[i]->name +
                    "' overlap in the data section");
  return out;
}

SafetensorsFile::SafetensorsFile(const std::string& path) : path_(path) {
  // O_NONBLOCK: a FIFO given as the trace must not block the open (it is refused just below).
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd_ < 0) throw Error("cannot open '" + path + "': " + std::strerror(errno), "check the path");
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    fd_ = -1;
    throw Error("'" + path + "' is not a regular file", "give the path of a .safetensors file");
  }
  file_size_ = st.st_size;
  try {
    if (file_size_ < 8) bad(path, "file is shorter than the 8-byte header length");
    data_start_ = 0;  // read_data is relative to data_start_: the length field is at 0
    uint8_t len[8];
    read_data(0, len, 8);
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | len[i];  // little-endian u64
    if (n == 0 || n > kMaxHeaderBytes || n > static_cast<uint64_t>(file_size_ - 8))
      bad(path, "header length " + std::to_string(n) + " does not fit the file (" +
                    std::to_string(file_size_) + " bytes, at most " +
                    std::to_string(kMaxHeaderBytes) + " of header)");
    header_.resize(n);
    read_data(8, header_.data(), static_cast<int64_t>(n));
    data_start_ = 8 + static_cast<int64_t>(n);
    tensors_ = parse_safetensors_header(header_, file_size_ - data_start_, path);
  } catch (...) {
    ::close(fd_);
    fd_ = -1;
    throw;
  }
}

SafetensorsFile::~SafetensorsFile() {
  if (fd_ >= 0) ::close(fd_);
}

SafetensorsFile::SafetensorsFile(SafetensorsFile&& o) noexcept
    : path_(std::move(o.path_)),
      fd_(o.fd_),
      file_size_(o.file_size_),
      data_start_(o.data_start_),
      header_(std::move(o.header_)),
      tensors_(std::move(o.tensors_)) {
  o.fd_ = -1;
}

const SafetensorsTensor* SafetensorsFile::find(const std::string& name) const {
  const auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

void SafetensorsFile::read_data(int64_t offset, void* dst, int64_t n) const {
  auto* p = static_cast<char*>(dst);
  int64_t at = data_start_ + offset;
  while (n > 0) {
    const ssize_t got = ::pread(fd_, p, static_cast<size_t>(std::min<int64_t>(n, 1 << 30)), at);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0)
      throw Error(
          "cannot read '" + path_ + "' at byte " + std::to_string(at) + ": " +
              (got < 0 ? std::strerror(errno) : "the file is shorter than when it was opened"),
          "do not modify the file while hybridbench reads it", kExitFailure);
    p += got;
    at += got;
    n -= got;
  }
}

void SafetensorsFile::read_rows_fp32(const SafetensorsTensor& t, int64_t r0, int64_t r1, float* dst,
                                     const std::vector<std::string>& dim_names) const {
  if (r0 < 0 || r1 < r0 || r1 > t.rows())
    throw Error("'" + path_ + "': rows [" + std::to_string(r0) + ", " + std::to_string(r1) +
                    ") of tensor '" + t.name + "' lie outside its " + std::to_string(t.rows()) +
                    " rows",
                "pass lengths that fit the file");
  DType dt;
  if (t.dtype == "F32")
    dt = DType::f32;
  else if (t.dtype == "F16")
    dt = DType::f16;
  else if (t.dtype == "BF16")
    dt = DType::bf16;
  else
    throw Error("'" + path_ + "': tensor '" + t.name + "' has dtype " + t.dtype +
                    " (only F16, BF16, F32 are read)",
                kFix);
  const int64_t first = r0 * t.row_elems(), count = (r1 - r0) * t.row_elems();
  const int64_t per_chunk = kChunkBytes / t.elem_bytes;
  std::vector<uint8_t> raw(static_cast<size_t>(std::min(count, per_chunk) * t.elem_bytes));
  for (int64_t i = 0; i < count; i += per_chunk) {
    const int64_t m = std::min(per_chunk, count - i);
    read_data(t.begin + (first + i) * t.elem_bytes, raw.data(), m * t.elem_bytes);
    float* out = dst + i;
    convert_to_fp32(dt, raw.data(), out, static_cast<size_t>(m));
    for (int64_t k = 0; k < m; ++k) {
      if (std::isfinite(out[k])) continue;
      const int64_t flat = first + i + k;
      throw Error("'" + path_ + "': tensor '" + t.name + "' holds " +
                      (std::isnan(out[k]) ? "NaN" : "Inf") + " at flat index " +
                      std::to_string(flat) + " [" + index_text(t, flat, dim_names) + "]",
                  "write finite values (a NaN or Inf makes every accuracy figure meaningless)");
    }
  }
}

}  // namespace hb::bench
