// The CUDA decode kernel's index math (kernels/cuda/decode_layout.h) checked on the CPU, in
// every build (it is plain C++), against straightforward enumerations: for every head_dim the
// kernel takes (multiples of 8 up to 256) and GQA group 1..8 (and a group of 12, served by two
// CTAs), over token ranges that are not multiples of the page or the tile, every attended token
// of every query head is covered exactly once, no index leaves its buffer, and the page/slot a
// segment is read from holds that token in core's page table.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/kv_cache.h"
#include "core/shape.h"
#include "kernels/cuda/decode_layout.h"
#include "kernels/cuda/kernel_args.h"
#include "tests/kernels/kv_fixture.h"

namespace hb::cuda {
namespace {

// sm_90's opt-in shared memory per block (227 KiB).
constexpr int kMaxSmemPerBlock = 232448;

std::vector<int> head_dims() {
  std::vector<int> d;
  for (int x = 8; x <= 256; x += 8) d.push_back(x);
  return d;
}

struct Range {
  int64_t begin, end;
};

// Attended ranges relative to a page-aligned base: empty, shorter than a segment, crossing a
// tile or page boundary by one, long and ragged at both ends.
const std::vector<Range> kRanges = {{0, 0},    {0, 1},     {0, 15},   {0, 17},
                                    {5, 70},   {63, 65},   {64, 128}, {37, 1001},
                                    {0, 1000}, {100, 100}, {127, 300}};
const std::vector<int> kPageTokens = {16, 48, 64, 128};

TEST(DecodeLayout, SharedMemoryRegionsAreAlignedDisjointAndFit) {
  for (int D : head_dims())
    for (int gmax : {1, 2, 4, 8})
      for (bool with_v : {false, true}) {
        SCOPED_TRACE("D " + std::to_string(D) + " gmax " + std::to_string(gmax) +
                     (with_v ? " attention" : " scoring"));
        const DecodeSmemLayout l = decode_layout(D, gmax, with_v, 2);
        for (int off : {l.q, l.stage, l.s_part, l.p, l.small, l.total}) EXPECT_EQ(off % 16, 0);
        EXPECT_EQ(l.q, 0);
        EXPECT_GE(l.stage - l.q, D * gmax * 4);  // q [D][gmax]
        EXPECT_EQ(l.stage_elems, D * kDecodeTile * (with_v ? 2 : 1));
        EXPECT_GE(l.s_part - l.stage, kDecodeStages * l.stage_elems * 2);
        if (with_v) {  // the PV reduction [groups][gmax][D] reuses the stages
          const int groups = kDecodeThreads / (D / 8);
          EXPECT_GE(l.s_part - l.stage, groups * gmax * D * 4);
          EXPECT_GE(l.small - l.p, kDecodeTile * gmax * 4);
        }
        EXPECT_GE(l.p - l.s_part, kDecodeStoredSlices * gmax * kDecodeTile * 4);
        EXPECT_GE(l.total - l.small, 3 * gmax * 4);
        EXPECT_LE(l.total, kMaxSmemPerBlock);
      }
}

TEST(DecodeLayout, EveryQueryHeadIsServedOnceByItsKvHead) {
  for (int group = 1; group <= 12; group = group == 8 ? 12 : group + 1)
    for (int kv_heads : {1, 3, 8}) {
      const int gmax = decode_gmax(group), chunks = decode_head_chunks(group, gmax);
      AttentionShape shape;
      shape.kv_heads = kv_heads;
      shape.q_heads = kv_heads * group;
      std::vector<int> served(shape.q_heads, 0);
      for (int y = 0; y < kv_heads * chunks; ++y) {
        const DecodeCtaHeads c = decode_cta_heads(y, chunks, group, gmax);
        ASSERT_GE(c.gn, 1) << "group " << group << " y " << y;
        ASSERT_LE(c.gn, gmax);
        for (int g = 0; g < c.gn; ++g) {
          const int qh = c.qh0 + g;
          ASSERT_GE(qh, 0);
          ASSERT_LT(qh, shape.q_heads) << "group " << group << " y " << y;
          EXPECT_EQ(shape.kv_head_of(qh), c.kv_head) << "q head " << qh;
          ++served[qh];
        }
      }
      for (int qh = 0; qh < shape.q_heads; ++qh)
        EXPECT_EQ(served[qh], 1) << "group " << group << " q head " << qh;
    }
}

TEST(DecodeLayout, PageShiftIsLog2OfPowerOfTwoPages) {
  EXPECT_EQ(decode_page_shift(16), 4);
  EXPECT_EQ(decode_page_shift(64), 6);
  EXPECT_EQ(decode_page_shift(1024), 10);
  EXPECT_EQ(decode_page_shift(48), -1);
  EXPECT_EQ(decode_page_shift(80), -1);
  for (int P = 16; P <= 512; P += 16) {
    const int s = decode_page_shift(P);
    for (int rs : {0, 15, 16, P - 1, P, 3 * P + 5, 100000}) {
      const DecodePageSlot a = decode_page_slot(rs, P, s), b = decode_page_slot(rs, P, -1);
      EXPECT_EQ(a.page, rs / P) << P << " " << rs;
      EXPECT_EQ(a.slot, rs % P) << P << " " << rs;
      EXPECT_EQ(a.page, b.page);
      EXPECT_EQ(a.slot, b.slot);
    }
  }
}

// Walks every CTA's tiles and segments for one head the way the kernel does, and counts each
// attended token once per masked-valid tile element. Also checks every copied segment lies in
// one listed page and inside the head's pages.
void check_coverage(int64_t base, Range r, int P, int tiles_per_split, int splits) {
  const int page_shift = decode_page_shift(P);
  const int64_t begin = base + r.begin, end = base + r.end;
  const int64_t listed_pages = (r.end + P - 1) / P;  // pages from base, as the launchers list
  std::map<int64_t, int> seen;
  int live_ctas = 0;
  for (int split = 0; split < splits; ++split) {
    const DecodeCtaTiles c = decode_cta_tiles(base, begin, end, split, tiles_per_split);
    ASSERT_GE(c.ntiles, 0);
    ASSERT_LE(c.ntiles, tiles_per_split);
    live_ctas += c.ntiles > 0;
    for (int t = 0; t < c.ntiles; ++t) {
      for (int sg = 0; sg < kDecodeTile / kDecodeSeg; ++sg) {
        const int rs = decode_segment_start(c, t, sg);
        if (!decode_segment_live(c, rs)) {
          // Zero-filled: it must not hold an attended token.
          for (int i = 0; i < kDecodeSeg; ++i)
            EXPECT_FALSE(base + rs + i >= begin && base + rs + i < end) << rs + i;
          continue;
        }
        const DecodePageSlot ps = decode_page_slot(rs, P, page_shift);
        ASSERT_GE(ps.page, 0);
        ASSERT_LT(ps.page, listed_pages) << "segment " << rs << " reads past the listed pages";
        ASSERT_GE(ps.slot, 0);
        ASSERT_LE(ps.slot + kDecodeSeg, P) << "segment " << rs << " crosses a page";
      }
      for (int tt = 0; tt < kDecodeTile; ++tt) {
        const int64_t tok = decode_tile_token(base, c, t, tt);
        if (tok >= begin && tok < end) ++seen[tok];
      }
    }
  }
  ASSERT_EQ(static_cast<int64_t>(seen.size()), end - begin);
  for (const auto& [tok, n] : seen) {
    ASSERT_GE(tok, begin);
    ASSERT_LT(tok, end);
    ASSERT_EQ(n, 1) << "token " << tok << " attended " << n << " times";
  }
  // Only the last splits of an over-provisioned plan may be idle.
  if (end > begin) {
    const int64_t tiles = (r.end + kDecodeTile - 1) / kDecodeTile - r.begin / kDecodeTile;
    EXPECT_EQ(live_ctas,
              std::min<int64_t>(splits, (tiles + tiles_per_split - 1) / tiles_per_split));
  }
}

TEST(DecodeLayout, TilesAndSegmentsCoverEveryAttendedTokenOnce) {
  for (int P : kPageTokens)
    for (int64_t base : {int64_t{0}, int64_t{2} * P})
      for (const Range& r : kRanges) {
        // The tiles a reference enumeration of the tokens needs.
        int64_t needed = 0;
        if (r.end > r.begin) needed = (r.end - 1) / kDecodeTile - r.begin / kDecodeTile + 1;
        for (int tps : {1, 2, 3, 5, 64}) {
          const int splits = static_cast<int>(std::max<int64_t>(1, (needed + tps - 1) / tps));
          SCOPED_TRACE("page " + std::to_string(P) + " base " + std::to_string(base) + " [" +
                       std::to_string(r.begin) + ", " + std::to_string(r.end) + ") " +
                       std::to_string(tps) + " tiles/split");
          check_coverage(base, r, P, tps, splits);
          check_coverage(base, r, P, tps, splits + 2);  // idle extra splits attend nothing
        }
      }
}

// Fills a cache whose every K and V element names its token and dim, then reads each live
// segment through the kernel's page/slot/chunk mapping from core's page table.
TEST(DecodeLayout, PageMappingReadsTheTokenCoresPageTableHolds) {
  auto code = [](int64_t t, int h, int j) { return static_cast<float>((t * 4 + h) * 256 + j); };
  for (int D : {8, 24, 64, 128, 256})
    for (int P : kPageTokens) {
      AttentionShape shape;
      shape.kv_heads = 2;
      shape.q_heads = 2;
      shape.head_dim = D;
      shape.kv_dtype = DType::f32;  // exact codes; the mapping is the same for every dtype
      const int64_t n = 1001;
      DenseKv src;
      src.tokens = n;
      src.kv_heads = shape.kv_heads;
      src.head_dim = D;
      src.k.resize(static_cast<size_t>(n) * shape.kv_heads * D);
      src.v.resize(src.k.size());
      for (int64_t t = 0; t < n; ++t)
        for (int h = 0; h < shape.kv_heads; ++h)
          for (int j = 0; j < D; ++j) {
            src.k[(t * shape.kv_heads + h) * D + j] = code(t, h, j);
            src.v[(t * shape.kv_heads + h) * D + j] = -code(t, h, j) - 1;
          }
      const test::OwnedCache cache = test::make_cache(shape, src, 0, n, P);
      const PagedKvView view = cache.view();
      const int page_shift = decode_page_shift(P);
      for (int h = 0; h < shape.kv_heads; ++h) {
        const KvHeadView& hv = view.heads[h];
        for (Range r : {Range{0, n}, Range{37, n - 3}}) {
          const DecodeCtaTiles c = decode_cta_tiles(0, r.begin, r.end, 0, 1 << 20);
          for (int t = 0; t < c.ntiles; ++t)
            for (int sg = 0; sg < kDecodeTile / kDecodeSeg; ++sg) {
              const int rs = decode_segment_start(c, t, sg);
              if (!decode_segment_live(c, rs)) continue;
              const DecodePageSlot ps = decode_page_slot(rs, P, page_shift);
              ASSERT_LT(ps.page, (hv.num_tokens + P - 1) / P);
              const auto* kb = reinterpret_cast<const float*>(hv.pages[ps.page].k);
              const auto* vb = reinterpret_cast<const float*>(hv.pages[ps.page].v);
              for (int chunk = 0; chunk < 2 * D; ++chunk) {
                const DecodeKChunk kc = decode_k_chunk(chunk);
                for (int e = 0; e < 8; ++e) {
                  const int64_t tok = rs + kc.h8 + e;
                  const float k = kb[static_cast<int64_t>(kc.dim) * P + ps.slot + kc.h8 + e];
                  const int ve = chunk * 8 + e;  // element of the segment's V run
                  const float v = vb[static_cast<int64_t>(ps.slot) * D + ve];
                  const int64_t vtok = rs + ve / D;
                  if (tok < n) {
                    ASSERT_EQ(k, code(tok, h, kc.dim)) << "token " << tok;
                  }
                  if (vtok < n) {
                    ASSERT_EQ(v, -code(vtok, h, ve % D) - 1) << "token " << vtok;
                  }
                }
              }
            }
        }
      }
    }
}

TEST(DecodeLayout, ThreadOwnershipCoversEveryTileElementOnce) {
  for (int D : head_dims()) {
    SCOPED_TRACE("D " + std::to_string(D));
    // K copy chunks: every (dim, token of the segment) exactly once.
    std::set<std::pair<int, int>> k_elems;
    for (int chunk = 0; chunk < 2 * D; ++chunk) {
      const DecodeKChunk kc = decode_k_chunk(chunk);
      ASSERT_LT(kc.dim, D);
      for (int e = 0; e < 8; ++e) EXPECT_TRUE(k_elems.insert({kc.dim, kc.h8 + e}).second);
    }
    EXPECT_EQ(static_cast<int>(k_elems.size()), D * kDecodeSeg);
    // Scores: every (token of the tile, dim) summed by exactly one thread, and the two
    // half-warps that are shuffled together hold adjacent slices of one warp.
    std::vector<int> score(static_cast<size_t>(kDecodeTile) * D, 0);
    for (int tid = 0; tid < kDecodeThreads; ++tid) {
      const DecodeScoreOwner o = decode_score_owner(tid);
      EXPECT_EQ(o.slice / 2, tid / 32);
      for (int j = o.slice; j < D; j += kDecodeSlices)
        for (int i = 0; i < 4; ++i) ++score[static_cast<size_t>(o.quad * 4 + i) * D + j];
    }
    EXPECT_TRUE(std::all_of(score.begin(), score.end(), [](int x) { return x == 1; }));
    // PV: every (token of the tile, dim) accumulated by exactly one active thread.
    std::vector<int> pv(static_cast<size_t>(kDecodeTile) * D, 0);
    for (int tid = 0; tid < kDecodeThreads; ++tid) {
      const DecodePvOwner o = decode_pv_owner(D, tid);
      if (!o.active) continue;
      EXPECT_EQ(o.groups * o.units <= kDecodeThreads, true);
      for (int tt = o.tgroup; tt < kDecodeTile; tt += o.groups)
        for (int i = 0; i < 8; ++i) ++pv[static_cast<size_t>(tt) * D + o.unit * 8 + i];
    }
    EXPECT_TRUE(std::all_of(pv.begin(), pv.end(), [](int x) { return x == 1; }));
  }
}

// The K stage's XOR swizzle (decode_k_smem_index): a bijection of [D][kTile] onto itself that
// keeps 16-byte chunks whole, and conflict-free shared-memory access for the kernel's two
// access patterns: the 16-byte segment stores (a phase is 8 lanes; each must hit its own four
// banks) and the scoring loop's 8-byte loads (a phase is a half-warp; 32 distinct banks).
TEST(DecodeLayout, KStageSwizzleIsABijectionAndBankConflictFree) {
  constexpr int kElem = 2;  // fp16 / bf16
  auto bank = [](int elem_index) { return (elem_index * kElem / 4) % 32; };
  for (int D : head_dims()) {
    SCOPED_TRACE("D " + std::to_string(D));
    std::vector<int> hit(static_cast<size_t>(D) * kDecodeTile, 0);
    for (int dim = 0; dim < D; ++dim)
      for (int tt = 0; tt < kDecodeTile; ++tt) {
        const int i = decode_k_smem_index(dim, tt);
        ASSERT_GE(i, dim * kDecodeTile);  // stays in its row
        ASSERT_LT(i, (dim + 1) * kDecodeTile);
        ++hit[static_cast<size_t>(i)];
        if (tt % 8 != 0) EXPECT_EQ(i, decode_k_smem_index(dim, tt - tt % 8) + tt % 8);
      }
    ASSERT_TRUE(std::all_of(hit.begin(), hit.end(), [](int x) { return x == 1; }));
    // Stores: chunk c = tid + 128 * iter; 8 consecutive lanes of a warp form a phase.
    for (int sg = 0; sg < kDecodeTile / kDecodeSeg; ++sg)
      for (int c0 = 0; c0 < 2 * D; c0 += 8) {
        std::set<int> groups;
        for (int c = c0; c < std::min(c0 + 8, 2 * D); ++c) {
          const DecodeKChunk kc = decode_k_chunk(c);
          const int i = decode_k_smem_index(kc.dim, sg * kDecodeSeg + kc.h8);
          EXPECT_TRUE(groups.insert(bank(i) / 4).second)
              << "segment " << sg << ", chunks from " << c0 << ": a bank conflict";
        }
      }
    // Loads: half-warp h of warp w reads dim slice + 8k (slice = 2w + h), 4 tokens per lane.
    for (int j = 0; j < D; ++j) {
      std::set<int> banks;
      for (int quad = 0; quad < kDecodeQuads; ++quad) {
        const int i = decode_k_smem_index(j, quad * 4);
        EXPECT_EQ(i % 4, 0);  // 8-byte aligned
        EXPECT_TRUE(banks.insert(bank(i)).second && banks.insert(bank(i) + 1).second)
            << "dim " << j << ": a bank conflict";
      }
    }
  }
}

TEST(DecodeLayout, PartialSlotsAreDistinctAndInBounds) {
  const int batch = 3, q_heads = 28, slots = 5;
  std::set<int64_t> seen;
  for (int b = 0; b < batch; ++b)
    for (int qh = 0; qh < q_heads; ++qh)
      for (int s = 0; s < slots; ++s) {
        const int64_t i = decode_partial_index(b, q_heads, qh, slots, s);
        ASSERT_GE(i, 0);
        ASSERT_LT(i, int64_t{batch} * q_heads * slots);
        EXPECT_TRUE(seen.insert(i).second);
      }
}

}  // namespace
}  // namespace hb::cuda
