#pragma once
// Reading safetensors files (what model tooling writes): an 8-byte little-endian header length,
// a JSON header {"name": {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}},
// then the data section. The whole header is validated before any data is trusted: integer
// fields only, element and byte counts that fit int64 (a shape whose count overflows is refused
// as such), byte size = count x dtype size, offsets inside the file, no two tensors overlapping.
// Data is read by row ranges with pread, never mapped or read whole: a caller converts only the
// rows it needs, memory stays bounded by what it keeps, and a file that shrinks underneath gives
// an hb::Error instead of SIGBUS.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace hb::bench {

struct SafetensorsTensor {
  std::string name;
  std::string dtype;           // as written: "F16", "BF16", "F32", "I64", ...
  std::vector<int64_t> shape;  // empty = scalar
  int64_t begin = 0, end = 0;  // byte offsets into the data section
  int64_t numel = 0;           // product of shape (checked for overflow)
  int64_t elem_bytes = 0;
  // Elements of one row (dimension 0): the product of the other dimensions.
  int64_t row_elems() const;
  int64_t rows() const { return shape.empty() ? 1 : shape[0]; }
};

// Validates `json` (the header text) for a data section of `data_bytes` bytes and returns its
// tensors by name. `name` (the file) appears in every error (hb::Error, exit 2). Pure: no I/O.
std::map<std::string, SafetensorsTensor> parse_safetensors_header(std::string_view json,
                                                                  int64_t data_bytes,
                                                                  const std::string& name);

class SafetensorsFile {
 public:
  explicit SafetensorsFile(const std::string& path);  // opens, reads and validates the header
  ~SafetensorsFile();
  SafetensorsFile(SafetensorsFile&& o) noexcept;
  SafetensorsFile& operator=(SafetensorsFile&&) = delete;
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::string& path() const { return path_; }
  int64_t file_size() const { return file_size_; }
  int64_t data_bytes() const { return file_size_ - data_start_; }
  const std::string& header_text() const { return header_; }
  const std::map<std::string, SafetensorsTensor>& tensors() const { return tensors_; }
  const SafetensorsTensor* find(const std::string& name) const;

  // Bytes [offset, offset + n) of the data section; hb::Error when the file no longer has them.
  void read_data(int64_t offset, void* dst, int64_t n) const;
  // Rows [r0, r1) of a F16, BF16 or F32 tensor as fp32 into dst (row_elems() x (r1 - r0)
  // floats). Every value must be finite: NaN or Inf is an hb::Error (exit 2) naming the tensor,
  // the flat index and the index per dimension (`dim_names` labels them, e.g. {"step", "head",
  // "element"}). Rows outside the tensor are an hb::Error, never a read past it.
  void read_rows_fp32(const SafetensorsTensor& t, int64_t r0, int64_t r1, float* dst,
                      const std::vector<std::string>& dim_names = {}) const;

 private:
  std::string path_;
  int fd_ = -1;
  int64_t file_size_ = 0, data_start_ = 0;
  std::string header_;
  std::map<std::string, SafetensorsTensor> tensors_;
};

}  // namespace hb::bench
