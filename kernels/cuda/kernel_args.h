#pragma once
// Plain argument structs shared by the host launchers (.cpp, compiled by the C++ compiler) and
// the kernels (.cu): no CUDA or standard-library types, so both sides see the same layout.
// Every pointer in here is one the GPU can dereference: device memory, or host memory that is
// pinned and mapped (the staging allocator's buffers).
#include <cstdint>

namespace hb::cuda {

// Mirrors hb::PageRef {k, v} (static_assert in page_table_cache.cpp keeps them in step).
struct DevPage {
  const void* k;  // K block [head_dim][page_tokens], token-minor
  const void* v;  // V block [page_tokens][head_dim], token-major
};

enum class KvType : int32_t { f16 = 0, bf16 = 1, f32 = 2 };

// One sequence of a launch.
struct SeqDesc {
  const float* q;  // [q_heads][head_dim] fp32, unscaled
  float* o;        // [q_heads][head_dim] final output (written directly when `direct`)
  float* lse;      // [q_heads]
  float* logits;   // optional scaled logits, [q_head * logits_stride + (t - logit_origin)]
  int64_t logits_stride;
  float scale;  // softmax scale (already resolved: never <= 0 here)
  int32_t pad_;
};

// One KV head of one sequence for one launch: the tokens [begin, end) are attended; pages[i]
// holds tokens [base + i*page_tokens, base + (i+1)*page_tokens). begin >= base.
struct HeadDesc {
  const DevPage* pages;
  int64_t base;
  int64_t begin, end;
  int64_t logit_origin;  // logits index of token t is t - logit_origin
};

// Split-KV decode attention (and, with with_v = 0, logit scoring). Grid:
//   x = split, y = kv_head * head_chunks + chunk, z = sequence.
// A CTA handles query heads [chunk*gmax, min(group, (chunk+1)*gmax)) of its KV head's group
// over tiles [first + split*tiles_per_split, ...) of kDecodeTile tokens, where first is the
// tile that holds `begin` (tiles are counted from `base`). end - base must be < 2^31. It writes its
// partial (o, lse) to slot `slot_offset + split` of the row (seq, q_head) in part_o/part_lse, or
// straight to the sequence's o/lse when `direct`.
inline constexpr int kDecodeTile = 64;
struct DecodeLaunch {
  const SeqDesc* seqs;    // [batch]
  const HeadDesc* heads;  // [batch][kv_heads]
  int32_t batch, q_heads, kv_heads, head_dim, page_tokens;
  int32_t page_shift;   // log2(page_tokens) when a power of two, else -1 (avoids a division)
  int32_t group;        // q_heads / kv_heads
  int32_t gmax;         // query heads per CTA (template parameter of the instance)
  int32_t head_chunks;  // ceil(group / gmax)
  int32_t splits;       // CTAs per (seq, kv head, chunk)
  int32_t tiles_per_split;
  int32_t slots;  // partial slots per row in part_o/part_lse
  int32_t slot_offset;
  int32_t direct;        // 1: write o/lse of the sequence (only with splits == 1, nothing to merge)
  int32_t write_logits;  // 1: write scaled logits where seqs[b].logits is set
  int32_t with_v;        // 0: logit scan only (K read, nothing but logits written)
  KvType dtype;
  float* part_o;    // [batch][q_heads][slots][head_dim]
  float* part_lse;  // [batch][q_heads][slots]
};

// Partial state over externally supplied logits and V rows (HybridGen's CPU top-k part of
// the logit merge). Grid: x = split, y = q_head. Row layout as in DecodeLaunch (batch 1).
struct ExtLaunch {
  const float* logits;  // [q_heads][n] (already scaled)
  const void* v;        // [q_heads][n][head_dim] in v_dtype, 16-byte aligned; with rows:
                        // [q_heads / group][block_rows][head_dim]
  const int32_t* rows;  // null, or [q_heads][n]: entry t of head h reads row rows[h * n + t]
  int32_t group;        // query heads sharing one block (with rows)
  int64_t block_rows;
  int64_t n;
  int64_t tokens_per_split;
  int32_t q_heads, head_dim, splits;
  int32_t slots, slot_offset;
  KvType v_dtype;
  float* part_o;
  float* part_lse;
};

// Merge of `slots` partials per row into each sequence's o/lse. Rows = batch * q_heads.
struct SplitMergeLaunch {
  const SeqDesc* seqs;
  int32_t batch, q_heads, head_dim, slots;
  const float* part_o;
  const float* part_lse;
};

// Merge of up to kMaxMergeParts caller-owned partial states ([heads][head_dim], [heads]).
inline constexpr int kMaxMergeParts = 16;
struct PartsMergeLaunch {
  const float* o[kMaxMergeParts];
  const float* lse[kMaxMergeParts];
  int32_t n_parts, heads, head_dim;
  float* o_out;
  float* lse_out;
};

// Rows of one KV head, selected by token index, copied out densely in the cache dtype.
struct GatherLaunch {
  const DevPage* pages;
  int64_t num_tokens;
  const int32_t* tokens;  // [count]; indices outside [0, num_tokens) give zero rows
  int64_t count;
  int32_t head_dim, page_tokens, elem_bytes;
  void* v_out;  // [count][head_dim] or null
  void* k_out;  // [count][head_dim] or null
};

// Per-page elementwise min and max of the keys of valid tokens (Quest's page metadata).
// Grid: x = page, y = kv_head. Output [kv_head][page_stride][head_dim] fp32.
struct MinMaxLaunch {
  const HeadDesc* heads;  // [kv_heads]; pages and num tokens (= end - base) per head
  int32_t kv_heads, head_dim, page_tokens;
  KvType dtype;
  int64_t page_stride;
  float* kmin;
  float* kmax;
};

// Host-side launchers, defined in the .cu files. `stream` is a cudaStream_t. They only
// enqueue; errors are raised by the caller's launch check.
void launch_decode(const DecodeLaunch& L, void* stream);
void launch_split_merge(const SplitMergeLaunch& L, void* stream);
void launch_parts_merge(const PartsMergeLaunch& L, void* stream);
void launch_ext_partial(const ExtLaunch& L, void* stream);
void launch_gather(const GatherLaunch& L, void* stream);
void launch_page_minmax(const MinMaxLaunch& L, int64_t max_pages, void* stream);

// Resident CTAs per SM of the decode instance a launch would use (for split planning).
int decode_ctas_per_sm(int gmax, bool with_v, KvType dtype, int head_dim);
// Query heads per CTA (the template instance) for a GQA group size: 1, 2, 4 or 8; groups
// larger than 8 are split over several CTAs (head_chunks), each re-reading the KV.
inline int decode_gmax(int group) { return group <= 1 ? 1 : group <= 2 ? 2 : group <= 4 ? 4 : 8; }

}  // namespace hb::cuda
