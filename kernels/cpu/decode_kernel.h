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

// Limits of one job (state lives on the stack): KV heads, and query heads over all of them.
inline constexpr int kMaxJobHeads = 64;
inline constexpr int kMaxJobQueryHeads = 256;

// One candidate of the streaming top-k (select): a logit and its token position.
struct SelectCand {
  float v;
  int32_t i;
};

// Streaming top-k state of one query head over one job's token range (KernelTable::select).
// Candidates are appended in token order; when `count` reaches `cap` the driver's
// `DecodeJob::compact` keeps the best k and sets `thr` (the k-th best) and `full`. Once full, a
// token is admitted only when its logit is > thr (NaN never is); a tile whose largest logit is
// <= thr is rejected with one compare.
struct SelectHead {
  SelectCand* cand = nullptr;
  int64_t count = 0, cap = 0, k = 0;
  float thr = 0;
  int full = 0;
};

// One KV head of a job: its tokens [job.begin, end) attended by job.group query heads.
struct JobHead {
  const float* q = nullptr;  // [group][head_dim], unscaled
  const PageRef* pages = nullptr;
  int64_t end = 0;            // >= job.begin; == job.begin: no tokens (neutral partial)
  float* o = nullptr;         // [group][head_dim], normalised by the partial's own sum
  float* lse = nullptr;       // [group]
  float* logits = nullptr;    // optional: logits[g * job.logits_stride + t - job.logits_base]
  SelectHead* sel = nullptr;  // select only: [group]
};

// Up to kMaxJobHeads KV heads over the same token range. The engine walks them interleaved
// tile by tile (head 0..n-1 at one position, then the next position): a cache filled token
// by token stores the heads' pages side by side, so this order reads memory nearly
// sequentially where one head at a time strides across it (page walks, DRAM pages).
struct DecodeJob {
  float scale = 0;  // > 0
  int page_tokens = 0, head_dim = 0, group = 0;
  DType dtype = DType::f16;
  int64_t begin = 0;
  int heads = 0;
  const JobHead* head = nullptr;
  int64_t logits_stride = 0, logits_base = 0;
  void (*compact)(SelectHead&) = nullptr;  // select only: keep the best k (generic code)
};

// One query head's attention over rows supplied with their logits (HybridGen's shipped top-k,
// the external side of the logit merge): o = sum_i softmax(logits)_i row_i, normalised, and
// lse = log sum_i exp(logits_i). Row i sits at rows + (at ? at[i] : i) * head_dim elements;
// entries whose weight underflows to 0 (padding carries -inf) are not read. n == 0 or every
// logit -inf: o = 0, lse = -inf (the neutral partial).
struct RowsJob {
  const float* logits = nullptr;
  int64_t n = 0;
  const std::byte* rows = nullptr;
  const int32_t* at = nullptr;
  int head_dim = 0;
  DType dtype = DType::f16;
  float* weights = nullptr;  // scratch, n floats
  float* o = nullptr;        // [head_dim]
  float* lse = nullptr;
};

// The compute roof's work (compute_roof.h): `tiles` passes of the decode kernel's instruction
// mix over one tile of `block` (head_dim x NS*16 elements, read as K [head_dim][tokens] and as
// V [tokens][head_dim], so it stays in L1) for `group` query heads; q is [group][head_dim].
struct RoofJob {
  DType dtype = DType::f16;
  int head_dim = 0, group = 0;
  const float* q = nullptr;
  const std::byte* block = nullptr;
  float* o = nullptr;  // [group][head_dim] scratch
  int64_t tiles = 0;
};

struct KernelTable {
  void (*attend)(const DecodeJob&);                 // o, lse (and logits when set) of every head
  void (*score)(const DecodeJob&);                  // scaled logits only: K is read, V is not
  void (*select)(const DecodeJob&);                 // score + streaming top-k into head.sel
  void (*rows)(const RowsJob&);                     // attention over supplied rows + logits
  uint64_t (*stream)(const void* p, size_t bytes);  // xor of all 64-byte-aligned words read
  void (*fill)(void* p, size_t bytes, uint64_t pattern);   // streaming (non-temporal) write
  void (*copy)(void* dst, const void* src, size_t bytes);  // loads + non-temporal stores
  float (*roof)(const RoofJob&);  // the attend mix at peak issue rate; returns a checksum
  int lanes;                      // head_dim must be a multiple of this
  int tile_tokens;                // tokens per tile of attend (and of a roof pass)
};

extern const KernelTable kScalarKernels, kAvx2Kernels, kAvx512Kernels;

// The table for `level`; throws hb::Error when the CPU cannot run it.
const KernelTable& kernels_for(SimdLevel level);
// The best table up to `level` whose vector width divides head_dim (scalar fits any).
const KernelTable& kernels_for(SimdLevel level, int head_dim);

}  // namespace hb::cpu
