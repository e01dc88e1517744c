#pragma once
// The index math of the split-KV decode kernel (decode_attention.cu), written once for the
// device, the host launchers and the CPU tests (tests/kernels/decode_layout_test.cpp checks it
// for every head_dim and group size the kernel takes, without a GPU): the shared-memory
// layout, which query heads a CTA serves, which tiles and 16-token copy segments it walks,
// where a segment lies in the page table, and which thread owns which (token, dim) of a tile.
// Plain C++ (HB_HD functions of ints), so a CPU-only build includes it too.
#include <cstdint>

#include "kernels/cuda/host_device.h"
#include "kernels/cuda/kernel_args.h"

namespace hb::cuda {

inline constexpr int kDecodeThreads = 128;
inline constexpr int kDecodeWarps = kDecodeThreads / 32;
inline constexpr int kDecodeSeg = 16;  // tokens per copy segment (never crosses a page)
inline constexpr int kDecodeStages = 2;
inline constexpr int kDecodeQuads = kDecodeTile / 4;  // a scoring thread owns 4 tokens ...
inline constexpr int kDecodeSlices = kDecodeThreads / kDecodeQuads;  // ... and every kSlices-th dim
// Lanes l and l+16 of a warp hold adjacent slices and are summed by a shuffle, so shared
// memory keeps one partial per warp (this keeps 3 CTAs per SM at head_dim 128, GMAX 4).
inline constexpr int kDecodeStoredSlices = kDecodeWarps;
static_assert(kDecodeSlices * kDecodeQuads == kDecodeThreads && kDecodeQuads == 16 &&
                  kDecodeSlices == 2 * kDecodeWarps,
              "slice pairs must be the two half-warps");
static_assert(kDecodeTile == 2 * 32, "softmax assumes 2 tokens per lane");
static_assert(kDecodeTile % kDecodeSeg == 0, "a tile is whole segments");

HB_HD int decode_align16(int x) { return (x + 15) / 16 * 16; }

// Shared-memory layout in bytes, identical on host (launch size) and device.
struct DecodeSmemLayout {
  int q, stage, stage_elems, s_part, p, small, total;
};
HB_HD DecodeSmemLayout decode_layout(int D, int gmax, bool with_v, int elem_bytes) {
  DecodeSmemLayout l{};
  int off = 0;
  l.q = off;  // q, pre-scaled: [D][gmax] fp32
  off += decode_align16(D * gmax * 4);
  l.stage = off;  // kDecodeStages x (K [D][kTile], V [kTile][D])
  l.stage_elems = D * kDecodeTile * (with_v ? 2 : 1);
  const int stages_bytes = kDecodeStages * l.stage_elems * elem_bytes;
  // The end-of-CTA reduction of PV partials over token groups reuses the stage buffers.
  const int groups = kDecodeThreads / (D / 8);
  const int reduce_bytes = with_v ? groups * gmax * D * 4 : 0;
  off += decode_align16(stages_bytes > reduce_bytes ? stages_bytes : reduce_bytes);
  l.s_part = off;  // [kStoredSlices][gmax][kTile]
  off += kDecodeStoredSlices * gmax * kDecodeTile * 4;
  l.p = off;  // [kTile][gmax]
  off += with_v ? kDecodeTile * gmax * 4 : 0;
  l.small = off;  // alpha[gmax], lse[gmax], inv_l[gmax]
  off += decode_align16(3 * gmax * 4);
  l.total = off;
  return l;
}

// CTAs per (sequence, KV head) along grid y: ceil(group / gmax).
HB_HD int decode_head_chunks(int group, int gmax) { return (group + gmax - 1) / gmax; }

// log2(page_tokens) when it is a power of two (the kernel then shifts instead of dividing),
// else -1.
HB_HD int decode_page_shift(int page_tokens) {
  if (page_tokens <= 0 || (page_tokens & (page_tokens - 1)) != 0) return -1;
  int s = 0;
  while ((1 << s) < page_tokens) ++s;
  return s;
}

// The query heads of the CTA at grid y = kv_head * head_chunks + chunk: heads
// [qh0, qh0 + gn) of the group (gn live of the gmax the instance computes).
struct DecodeCtaHeads {
  int kv_head, g0, gn, qh0;
};
HB_HD DecodeCtaHeads decode_cta_heads(int y, int head_chunks, int group, int gmax) {
  DecodeCtaHeads c{};
  c.kv_head = y / head_chunks;
  c.g0 = (y % head_chunks) * gmax;
  c.gn = group - c.g0 < gmax ? group - c.g0 : gmax;
  c.qh0 = c.kv_head * group + c.g0;
  return c;
}

// The tiles split `split` walks of one head: tokens [begin, end) are attended, counted from
// `base` (the first listed page) as r0, r1; tiles are counted from base too. ntiles is 0 for a
// split past the range.
struct DecodeCtaTiles {
  int r0, r1, tile0, ntiles;
};
HB_HD DecodeCtaTiles decode_cta_tiles(int64_t base, int64_t begin, int64_t end, int split,
                                      int tiles_per_split) {
  DecodeCtaTiles c{};
  c.r0 = static_cast<int>(begin - base);
  c.r1 = static_cast<int>(end - base);
  c.tile0 = c.r0 / kDecodeTile + split * tiles_per_split;
  c.ntiles = 0;
  if (c.r1 > c.r0) {
    const int left = (c.r1 + kDecodeTile - 1) / kDecodeTile - c.tile0;
    c.ntiles = left < tiles_per_split ? left : tiles_per_split;
    if (c.ntiles < 0) c.ntiles = 0;
  }
  return c;
}

// First token (relative to base) of segment `sg` of tile `t` (0-based within the CTA).
HB_HD int decode_segment_start(const DecodeCtaTiles& c, int t, int sg) {
  return (c.tile0 + t) * kDecodeTile + sg * kDecodeSeg;
}
// Whether segment [rs, rs + kSeg) holds an attended token: only those are copied (the pages of
// the others may not exist); the rest of the tile is zero-filled.
HB_HD bool decode_segment_live(const DecodeCtaTiles& c, int rs) {
  return rs < c.r1 && rs + kDecodeSeg > c.r0;
}

// Where relative token `rs` lies: pages[page] (of the head's listed pages), token `slot` of the
// block, as core's page table (core/kv_cache.h) stores it.
struct DecodePageSlot {
  int page, slot;
};
HB_HD DecodePageSlot decode_page_slot(int rs, int page_tokens, int page_shift) {
  DecodePageSlot p{};
  p.page = page_shift >= 0 ? rs >> page_shift : rs / page_tokens;
  p.slot = rs - p.page * page_tokens;
  return p;
}

// A segment is copied as 2 x head_dim 16-byte chunks per block. K chunk c is half `h8` (0 or 8
// tokens) of K row `dim`: elements [dim * page_tokens + slot + h8, +8) of the K block, landing
// at [dim * kTile + seg * kSeg + h8, +8) of the stage. V chunk c is elements [c*8, c*8+8) of the
// segment's contiguous run of rows (both in the block and in the stage).
struct DecodeKChunk {
  int dim, h8;
};
HB_HD DecodeKChunk decode_k_chunk(int c) { return DecodeKChunk{c >> 1, (c & 1) * 8}; }

// Where element (dim, tt) of a tile's K stage lives, in elements from the stage start. A K row
// (one dim, kTile 2-byte tokens) is 128 bytes: exactly the 32 banks. Unswizzled, the 8 lanes of
// one 16-byte store phase (4 dims x 2 halves of a segment) hit the same 32 bytes of 4 rows: a
// 4-way bank conflict. XOR-ing the row's 16-byte chunk index with (dim % 4) * 2 spreads those
// 8 stores over all 8 chunks, and permuting whole chunks within a row keeps a half-warp's
// 8-byte reads of one row (the scoring loop) conflict-free. Elements 8-aligned in a chunk stay
// together, so 16-byte cp.async targets and 8-byte loads stay aligned.
HB_HD int decode_k_smem_index(int dim, int tt) {
  const int chunk = (tt >> 3) ^ ((dim & 3) << 1);
  return dim * kDecodeTile + (chunk << 3) + (tt & 7);
}

// Absolute token of element tt of tile t (what masking and logits use).
HB_HD int64_t decode_tile_token(int64_t base, const DecodeCtaTiles& c, int t, int tt) {
  return base + static_cast<int64_t>(c.tile0 + t) * kDecodeTile + tt;
}

// Scoring: thread tid sums q.k over dims slice, slice + kSlices, ... for tokens
// [quad*4, quad*4 + 4) of the tile; slices 2w and 2w+1 (the half-warps of warp w) are
// combined by a shuffle and stored as slice w.
struct DecodeScoreOwner {
  int quad, slice;
};
HB_HD DecodeScoreOwner decode_score_owner(int tid) {
  return DecodeScoreOwner{tid % kDecodeQuads, tid / kDecodeQuads};
}

// PV: thread tid owns dims [unit*8, unit*8 + 8) of tokens tgroup, tgroup + groups, ... of the
// tile; the few threads left over when head_dim / 8 does not divide the block (tgroup >= groups)
// idle.
struct DecodePvOwner {
  int units, groups, unit, tgroup;
  bool active;
};
HB_HD DecodePvOwner decode_pv_owner(int D, int tid) {
  DecodePvOwner o{};
  o.units = D / 8;
  o.groups = kDecodeThreads / o.units;
  o.unit = tid % o.units;
  o.tgroup = tid / o.units;
  o.active = o.tgroup < o.groups;
  return o;
}

// Row (sequence b, query head qh) of the split partials, and the index of its slot `slot`
// in part_lse (times head_dim, plus the dim, in part_o).
HB_HD int64_t decode_partial_index(int b, int q_heads, int qh, int slots, int slot) {
  return (static_cast<int64_t>(b) * q_heads + qh) * slots + slot;
}

}  // namespace hb::cuda
