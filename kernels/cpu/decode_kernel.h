#pragma once
// Internal contract between the drivers (attention.cpp, select.cpp) and the per-ISA kernels
// (kernel_scalar.cpp, kernel_avx2.cpp, kernel_avx512.cpp). Plain structs and function pointers
// only: the ISA files are compiled with different -m flags, so they must not share inline
// C++ (a weak symbol compiled for AVX-512 could be picked by the linker for generic code).
#include <cstddef>
#include <cstdint>

#include "core/cpu_features.h"
#include "core/dtype.h"

namespace hb {
struct PageRef;
}

namespace hb::cpu {

// Query heads per KV head the engine keeps softmax state for (on the stack).
inline constexpr int kMaxGroup = 256;

// One KV head's tokens [begin, end) (end > begin >= 0) attended by `group` query heads.
struct AttendJob {
  const float* q = nullptr;     // [group][head_dim], unscaled
  float scale = 0;              // > 0
  const PageRef* pages = nullptr;
  int page_tokens = 0, head_dim = 0, group = 0;
  DType dtype = DType::f16;
  int64_t begin = 0, end = 0;
  float* o = nullptr;           // [group][head_dim], normalised by the partial's own sum
  float* lse = nullptr;         // [group]
  float* logits = nullptr;      // optional: logits[g * logits_stride + t - logits_base]
  int64_t logits_stride = 0, logits_base = 0;
};

// Scaled logits only (K is read, V is not): logits[g * logits_stride + t - logits_base].
struct ScoreJob {
  const float* q = nullptr;
  float scale = 0;
  const PageRef* pages = nullptr;
  int page_tokens = 0, head_dim = 0, group = 0;
  DType dtype = DType::f16;
  int64_t begin = 0, end = 0;
  float* logits = nullptr;
  int64_t logits_stride = 0, logits_base = 0;
};

struct KernelTable {
  void (*attend)(const AttendJob&);
  void (*score)(const ScoreJob&);
  uint64_t (*stream)(const void* p, size_t bytes);  // xor of all 64-byte-aligned words read
  int lanes;                                         // head_dim must be a multiple of this
};

extern const KernelTable kScalarKernels, kAvx2Kernels, kAvx512Kernels;

// The table for `level`; throws hb::Error when the CPU cannot run it.
const KernelTable& kernels_for(SimdLevel level);
// The best table up to `level` whose vector width divides head_dim (scalar fits any).
const KernelTable& kernels_for(SimdLevel level, int head_dim);

}  // namespace hb::cpu
