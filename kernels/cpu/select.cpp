#include "kernels/cpu/select.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <vector>

#include "core/error.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/decode_kernel.h"
#include "kernels/cpu/kth_largest.h"
#include "kernels/cpu/merge.h"
#include "kernels/cpu/work_split.h"
#include "kernels/nvtx.h"

namespace hb::cpu {

namespace {
float scale_or_default(float scale, int head_dim) {
  return scale > 0 ? scale : 1.0f / std::sqrt(static_cast<float>(head_dim));
}
}  // namespace

void score_logits(const float* q, int q_heads, const PagedKvView& kv, int64_t begin, int64_t end,
                  float scale, float* logits, int64_t stride, ThreadPool& pool, SimdLevel simd) {
  HB_NVTX_RANGE("hb.cpu.score_logits");
  if (kv.kv_heads <= 0 || q_heads % kv.kv_heads != 0 || q_heads / kv.kv_heads > kMaxJobQueryHeads)
    throw Error("score_logits: " + std::to_string(q_heads) + " query heads cannot share " +
                    std::to_string(kv.kv_heads) + " KV heads",
                "q_heads must be a multiple of kv_heads");
  const KernelTable& k = kernels_for(simd, kv.head_dim);
  const int G = q_heads / kv.kv_heads, d = kv.head_dim;
  begin = std::max<int64_t>(begin, 0);
  auto head_end = [&](int h) {
    const int64_t n = kv.heads[h].num_tokens;
    return std::max(begin, end < 0 ? n : std::min(end, n));
  };
  int64_t longest = 0;
  for (int h = 0; h < kv.kv_heads; ++h) longest = std::max(longest, head_end(h) - begin);
  // Same task shape as decode_attention: groups of heads walked interleaved, token splits.
  const HeadSplit sp =
      split_heads(kv.kv_heads, G, longest, split_size(longest * kv.kv_heads, pool.size()));
  pool.parallel_for(sp.head_jobs * sp.splits, [&](int64_t task, int) {
    const int first = static_cast<int>(task / sp.splits) * sp.heads_per_job;
    DecodeJob job;
    job.scale = scale_or_default(scale, d);
    job.page_tokens = kv.page_tokens;
    job.head_dim = d;
    job.group = G;
    job.dtype = kv.dtype;
    job.begin = begin + (task % sp.splits) * sp.split_tokens;
    job.heads = std::min(sp.heads_per_job, kv.kv_heads - first);
    job.logits_stride = stride;
    job.logits_base = begin;
    JobHead heads[kMaxJobHeads];
    for (int i = 0; i < job.heads; ++i) {
      heads[i].q = q + static_cast<size_t>(first + i) * G * d;
      heads[i].pages = kv.heads[first + i].pages;
      heads[i].end = std::clamp(head_end(first + i), job.begin, job.begin + sp.split_tokens);
      heads[i].logits = logits + static_cast<size_t>(first + i) * G * stride;
    }
    job.head = heads;
    k.score(job);
  });
}

namespace {

// The selection order of topk_select_rows: NaN ranks as -inf, ties by lower index.
inline float sel_key(float x) {
  return std::isnan(x) ? -std::numeric_limits<float>::infinity() : x;
}

// Candidate buffer per (piece, head): kCapFactor * k + 64. Larger: fewer compactions, each
// keeping k of more, and a threshold that rises later.
constexpr int64_t kCapFactor = 4;

// The best k of n candidates in token order, kept in place and in order (stable): the k-th
// best key is found by radix selection on a plain float copy, then one pass keeps every
// candidate above it and the lowest-index ties. Returns that key. Requires n > k > 0.
float keep_best_in_order(SelectCand* c, int64_t n, int64_t k) {
  thread_local std::vector<float> keys;
  keys.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) keys[i] = sel_key(c[i].v);
  const KthLargest kth = kth_largest(keys.data(), n, k);
  const float thr = kth.value;
  int64_t ties = k - kth.above, w = 0;
  for (int64_t i = 0; i < n && w < k; ++i) {
    const float x = keys[i];
    if (x > thr || (x == thr && ties > 0)) {
      ties -= !(x > thr);
      c[w++] = c[i];
    }
  }
  return thr;
}

// Keeps the best k candidates of a full buffer; the k-th one's key becomes the threshold.
void compact_head(SelectHead& sh) {
  if (sh.count <= sh.k) return;  // cap covers every token of the piece: never full
  sh.thr = keep_best_in_order(sh.cand, sh.count, sh.k);
  sh.count = sh.k;
  sh.full = 1;
}

// Query head h's tokens from `begin`, and whether a floor pays for its k of them: only when k
// is well under them (k < n/8), so that most tiles fall below it. Sampled and hinted floors
// follow the same rule.
int64_t head_tokens(const PagedKvView& kv, int G, int h, int64_t begin) {
  return std::max(begin, kv.heads[h / G].num_tokens) - begin;
}
bool floor_pays(int64_t k, int64_t n) { return k > 0 && k * 8 < n; }

// Sub-blocks of 16 tokens scored up front, per KV head, to estimate each query head's floor.
constexpr int kSampleBlocks = 32;

// Per query head, a floor most likely below its k-th largest logit, from the logits of
// kSampleBlocks sub-blocks spread over the range (a few % of K read twice), aiming at ~1.5x k
// admitted plus four standard deviations of the sampling error; -inf where no floor pays.
std::vector<float> sample_floors(const KernelTable& kt, const float* q, int q_heads,
                                 const PagedKvView& kv, int64_t begin, float scale,
                                 const std::vector<int64_t>& kq, ThreadPool& pool) {
  constexpr float kLow = -std::numeric_limits<float>::infinity();
  const int G = q_heads / kv.kv_heads, d = kv.head_dim;
  std::vector<float> floors(static_cast<size_t>(q_heads), kLow);
  int64_t longest = 0;
  for (int h = 0; h < kv.kv_heads; ++h)
    longest = std::max(longest, std::max(begin, kv.heads[h].num_tokens) - begin);
  if (longest < 64 * kSampleBlocks) return floors;
  const int64_t step = longest / kSampleBlocks, width = kSampleBlocks * 16;
  std::vector<float> samp(static_cast<size_t>(q_heads) * width,
                          std::numeric_limits<float>::quiet_NaN());
  const int hpj = std::max(1, std::min({kv.kv_heads, kMaxJobHeads, kMaxJobQueryHeads / G}));
  const int head_jobs = (kv.kv_heads + hpj - 1) / hpj;
  pool.parallel_for(static_cast<int64_t>(head_jobs) * kSampleBlocks, [&](int64_t task, int) {
    const int first = static_cast<int>(task / kSampleBlocks) * hpj;
    const int64_t j = task % kSampleBlocks;
    DecodeJob job;
    job.scale = scale_or_default(scale, d);
    job.page_tokens = kv.page_tokens;
    job.head_dim = d;
    job.group = G;
    job.dtype = kv.dtype;
    // Jittered within its stride (a hash of j): evenly spaced blocks would alias with any
    // periodic structure of the cache.
    const int64_t jitter =
        step > 32
            ? static_cast<int64_t>((static_cast<uint64_t>(j + 1) * 0x9E3779B97F4A7C15ull) >> 40) %
                  (step - 16)
            : 0;
    job.begin = begin + j * step + jitter;
    job.heads = std::min(hpj, kv.kv_heads - first);
    job.logits_stride = width;
    job.logits_base = job.begin - j * 16;
    JobHead heads[kMaxJobHeads];
    for (int i = 0; i < job.heads; ++i) {
      heads[i].q = q + static_cast<size_t>(first + i) * G * d;
      heads[i].pages = kv.heads[first + i].pages;
      heads[i].end = std::clamp(kv.heads[first + i].num_tokens, job.begin, job.begin + 16);
      heads[i].logits = samp.data() + static_cast<size_t>(first + i) * G * width;
    }
    job.head = heads;
    kt.score(job);
  });
  for (int h = 0; h < q_heads; ++h) {
    const int64_t n = head_tokens(kv, G, h, begin);
    if (!floor_pays(kq[h], n)) continue;
    std::vector<float> v;
    for (int64_t i = 0; i < width; ++i)
      if (!std::isnan(samp[h * width + i])) v.push_back(samp[h * width + i]);
    const double want = static_cast<double>(kq[h]) / static_cast<double>(n) * v.size();
    const auto pos = static_cast<size_t>(1.5 * want + 4.0 * std::sqrt(want) + 8.0);
    if (v.size() < 256 || pos + 1 >= v.size()) continue;
    floors[h] = kth_largest(v.data(), static_cast<int64_t>(v.size()), pos + 1).value;
  }
  return floors;
}

// Where a pass's heads start: from no floor (admit everything until the buffer fills), from
// floors sampled over the range, or from the caller's hints.
enum class Floors { none, sampled, hinted };

// Hinted floors are used like sampled ones: only where one pays.
std::vector<float> hinted_floors(const float* hint, int q_heads, int G, const PagedKvView& kv,
                                 int64_t begin, const std::vector<int64_t>& kq) {
  std::vector<float> floors(static_cast<size_t>(q_heads), -std::numeric_limits<float>::infinity());
  for (int h = 0; h < q_heads; ++h) {
    if (floor_pays(kq[h], head_tokens(kv, G, h, begin))) floors[h] = hint[h];
  }
  return floors;
}

// How one pass cuts the work: pieces (tasks) of heads_per_job KV heads times token splits, and
// one SelectHead per (piece, query head), pieces in task order.
struct PassLayout {
  int q_heads = 0, G = 1;
  HeadSplit sp;
  int64_t tasks() const { return static_cast<int64_t>(sp.head_jobs) * sp.splits; }
  // The state of query head h in split `split` of the piece holding its KV head.
  size_t state_of(int h, int64_t split) const {
    const int64_t hj = (h / G) / sp.heads_per_job;
    return static_cast<size_t>(hj * sp.splits + split) * q_heads + h;
  }
};

// Per (piece, query head) state and candidate storage: up to kCapFactor * k + 64
// candidates, or every token of the piece when that is fewer (then it never compacts). A head
// with a floor admits only logits >= it from the start.
void init_states(const PassLayout& lay, const std::vector<int64_t>& kq,
                 const std::vector<float>& floors, std::vector<SelectHead>& states,
                 std::vector<SelectCand>& store) {
  const int q_heads = lay.q_heads;
  states.assign(static_cast<size_t>(lay.tasks()) * q_heads, SelectHead{});
  std::vector<size_t> offs(states.size() + 1, 0);
  for (int64_t t = 0; t < lay.tasks(); ++t)
    for (int h = 0; h < q_heads; ++h) {
      const size_t s = static_cast<size_t>(t) * q_heads + h;
      SelectHead& sh = states[s];
      const bool mine = (h / lay.G) / lay.sp.heads_per_job == t / lay.sp.splits;  // its heads
      sh.k = mine ? kq[h] : 0;
      sh.cap = sh.k == 0 ? 0 : std::min<int64_t>(lay.sp.split_tokens, kCapFactor * sh.k + 64);
      if (sh.k == 0) {  // nothing to select: every tile is rejected
        sh.full = 1;
        sh.thr = std::numeric_limits<float>::infinity();
      } else if (floors[h] > -std::numeric_limits<float>::infinity()) {
        // Admit logits >= the floor: valid as a threshold only if k of them turn up (checked
        // after the pass).
        sh.full = 1;
        sh.thr = std::nextafter(floors[h], -std::numeric_limits<float>::infinity());
      } else {
        sh.thr = -std::numeric_limits<float>::infinity();
      }
      offs[s + 1] = offs[s] + static_cast<size_t>(sh.cap);
    }
  store.resize(std::max<size_t>(1, offs.back()));
  for (size_t s = 0; s < states.size(); ++s) states[s].cand = store.data() + offs[s];
}

// Every piece scans its heads' tokens with the select kernel, into its states.
void scan_pieces(const KernelTable& kt, const float* q, const PagedKvView& kv, int64_t begin,
                 float scale, const PassLayout& lay, std::vector<SelectHead>& states,
                 ThreadPool& pool) {
  const int G = lay.G, d = kv.head_dim;
  const HeadSplit& sp = lay.sp;
  pool.parallel_for(lay.tasks(), [&](int64_t task, int) {
    const int first = static_cast<int>(task / sp.splits) * sp.heads_per_job;
    DecodeJob job;
    job.scale = scale_or_default(scale, d);
    job.page_tokens = kv.page_tokens;
    job.head_dim = d;
    job.group = G;
    job.dtype = kv.dtype;
    job.begin = begin + (task % sp.splits) * sp.split_tokens;
    job.heads = std::min(sp.heads_per_job, kv.kv_heads - first);
    job.compact = &compact_head;
    JobHead heads[kMaxJobHeads];
    for (int i = 0; i < job.heads; ++i) {
      const int64_t end = std::max(begin, kv.heads[first + i].num_tokens);
      heads[i].q = q + static_cast<size_t>(first + i) * G * d;
      heads[i].pages = kv.heads[first + i].pages;
      heads[i].end = std::clamp(end, job.begin, job.begin + sp.split_tokens);
      heads[i].sel = states.data() + static_cast<size_t>(task) * lay.q_heads + (first + i) * G;
    }
    job.head = heads;
    kt.select(job);
  });
}

// True when every query head's pieces admitted at least its k (a floor above the k-th logit
// admits fewer).
bool floors_held(const PassLayout& lay, const std::vector<SelectHead>& states,
                 const std::vector<int64_t>& kq) {
  for (int h = 0; h < lay.q_heads; ++h) {
    int64_t total = 0;
    for (int64_t sl = 0; sl < lay.sp.splits; ++sl) total += states[lay.state_of(h, sl)].count;
    if (total < kq[h]) return false;
  }
  return true;
}

// Merges the pieces' candidates per query head: the best k, then ascending positions.
void merge_pieces(const PassLayout& lay, const std::vector<SelectHead>& states,
                  const std::vector<int64_t>& kq, int32_t* idx_out, float* val_out,
                  int64_t out_stride, ThreadPool& pool) {
  pool.parallel_for(lay.q_heads, [&](int64_t h, int) {
    const int64_t kh = kq[h];
    if (kh == 0) return;
    thread_local std::vector<SelectCand> all;
    all.clear();
    for (int64_t s = 0; s < lay.sp.splits; ++s) {
      const SelectHead& sh = states[lay.state_of(static_cast<int>(h), s)];
      all.insert(all.end(), sh.cand, sh.cand + sh.count);
    }
    // The pieces are in token order and so are their candidates: the merge keeps the order.
    if (static_cast<int64_t>(all.size()) > kh)
      keep_best_in_order(all.data(), static_cast<int64_t>(all.size()), kh);
    for (int64_t i = 0; i < kh; ++i) {
      idx_out[h * out_stride + i] = all[i].i;
      if (val_out) val_out[h * out_stride + i] = all[i].v;
    }
  });
}

// One pass; with floors, heads start from them (admitting only logits >= the floor) and the
// pass fails (returns false, nothing written) when some head admitted fewer than k.
bool select_pass(const float* q, int q_heads, const PagedKvView& kv, int64_t begin, float scale,
                 const int64_t* k, int32_t* idx_out, float* val_out, int64_t out_stride,
                 ThreadPool& pool, SimdLevel simd, Floors from, const float* hint) {
  if (kv.kv_heads <= 0 || q_heads % kv.kv_heads != 0 || q_heads / kv.kv_heads > kMaxJobQueryHeads)
    throw Error("select_topk: " + std::to_string(q_heads) + " query heads cannot share " +
                    std::to_string(kv.kv_heads) + " KV heads",
                "q_heads must be a multiple of kv_heads");
  const KernelTable& kt = kernels_for(simd, kv.head_dim);
  PassLayout lay;
  lay.q_heads = q_heads;
  lay.G = q_heads / kv.kv_heads;
  begin = std::max<int64_t>(begin, 0);
  auto head_end = [&](int h) { return std::max(begin, kv.heads[h].num_tokens); };
  int64_t longest = 0;
  for (int h = 0; h < kv.kv_heads; ++h) longest = std::max(longest, head_end(h) - begin);
  // Few, long pieces (one per worker): each piece keeps its own k per head, so short pieces
  // would admit a large share of their tokens before the threshold rises.
  const int64_t units = longest * kv.kv_heads, want = static_cast<int64_t>(pool.size());
  lay.sp = split_heads(kv.kv_heads, lay.G, longest,
                       std::max<int64_t>(kMinSplitTokens, (units + want - 1) / want));
  std::vector<int64_t> kq(static_cast<size_t>(q_heads));
  for (int h = 0; h < q_heads; ++h)
    kq[h] = std::clamp<int64_t>(k[h], 0, head_end(h / lay.G) - begin);
  const std::vector<float> floors =
      from == Floors::sampled  ? sample_floors(kt, q, q_heads, kv, begin, scale, kq, pool)
      : from == Floors::hinted ? hinted_floors(hint, q_heads, lay.G, kv, begin, kq)
                               : std::vector<float>(static_cast<size_t>(q_heads),
                                                    -std::numeric_limits<float>::infinity());
  // The caller's scratch, named through references: inside the pool's lambdas a thread_local
  // would be each worker's own (empty) instance.
  thread_local std::vector<SelectHead> states_tl;
  thread_local std::vector<SelectCand> store_tl;
  std::vector<SelectHead>& states = states_tl;
  init_states(lay, kq, floors, states, store_tl);
  scan_pieces(kt, q, kv, begin, scale, lay, states, pool);
  // A floor above the k-th logit: start over.
  if (from != Floors::none && !floors_held(lay, states, kq)) return false;
  merge_pieces(lay, states, kq, idx_out, val_out, out_stride, pool);
  return true;
}

}  // namespace

std::atomic<int64_t> g_select_fallbacks{0};
std::atomic<int64_t> g_select_hinted{0};
std::atomic<int64_t> g_select_hint_misses{0};

void select_topk(const float* q, int q_heads, const PagedKvView& kv, int64_t begin, float scale,
                 const int64_t* k, int32_t* idx_out, float* val_out, int64_t out_stride,
                 ThreadPool& pool, SimdLevel simd, const float* floor_hint) {
  HB_NVTX_RANGE("hb.cpu.select_topk");
  auto pass = [&](Floors from) {
    return select_pass(q, q_heads, kv, begin, scale, k, idx_out, val_out, out_stride, pool, simd,
                       from, floor_hint);
  };
  // A hint for every head, or none: a head without one would scan from no floor at all.
  const bool hinted = floor_hint && std::all_of(floor_hint, floor_hint + q_heads,
                                                [](float x) { return std::isfinite(x); });
  if (hinted) {
    ++g_select_hinted;
    if (pass(Floors::hinted)) return;
    ++g_select_hint_misses;
  }
  if (!pass(Floors::sampled)) pass(Floors::none), ++g_select_fallbacks;
}

namespace {

// One uint64 per element whose unsigned order is the selection order: the float mapped to an
// order-preserving uint32 (NaN lowest, -0 == +0) in the high half, the complement of the index
// in the low half so that equal values rank the lower index higher. Selecting the k largest
// keys is then plain integer work on contiguous memory (several times faster than comparing
// floats through an index array).
uint64_t rank_key(float x, int64_t i) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  uint32_t k;
  if (std::isnan(x))
    k = 0;
  else if (x == 0.0f)
    k = 0x80000000u;  // both zeros
  else
    k = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
  return (static_cast<uint64_t>(k) << 32) | (0xffffffffu - static_cast<uint32_t>(i));
}

}  // namespace

void topk_rows(const float* values, int rows, int64_t n, int64_t stride, int64_t k,
               int32_t* idx_out, float* val_out, ThreadPool* pool) {
  HB_NVTX_RANGE("hb.cpu.topk_rows");
  k = std::clamp<int64_t>(k, 0, n);
  if (k == 0) return;
  auto one_row = [&](int64_t r, int) {
    const float* v = values + r * stride;
    thread_local std::vector<uint64_t> keys;
    keys.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) keys[i] = rank_key(v[i], i);
    std::nth_element(keys.begin(), keys.begin() + (k - 1), keys.end(), std::greater<>());
    std::sort(keys.begin(), keys.begin() + k, std::greater<>());
    for (int64_t i = 0; i < k; ++i) {
      const int32_t idx = static_cast<int32_t>(0xffffffffu - static_cast<uint32_t>(keys[i]));
      idx_out[r * k + i] = idx;
      if (val_out) val_out[r * k + i] = v[idx];
    }
  };
  if (pool)
    pool->parallel_for(rows, one_row);
  else
    for (int r = 0; r < rows; ++r) one_row(r, 0);
}

namespace {

// The V rows of `tokens` packed densely. Rows sit at random positions in their pages, so each
// is a cache miss: the row kGatherAhead places on is requested while this one is copied, and a
// row of a common size is copied with a fixed-size move (a libc call per 256-byte row cost more
// than the copy).
constexpr int64_t kGatherAhead = 8;

template <size_t RowBytes>
void gather_v_rows(const KvHeadView& head, int P, int d, size_t es, const int32_t* tokens,
                   int64_t count, std::byte* out, size_t row_bytes) {
  auto row_at = [&](int64_t i) {
    const PageRef& p = head.pages[tokens[i] / P];
    return p.v + v_block_offset(0, tokens[i] % P, d) * es;
  };
  for (int64_t i = 0; i < count; ++i) {
    if (i + kGatherAhead < count) {
      const std::byte* f = row_at(i + kGatherAhead);
      for (size_t b = 0; b < row_bytes; b += 64) __builtin_prefetch(f + b);
    }
    if constexpr (RowBytes > 0)
      std::memcpy(out + i * RowBytes, row_at(i), RowBytes);
    else
      std::memcpy(out + i * row_bytes, row_at(i), row_bytes);
  }
}

}  // namespace

void gather_rows(const PagedKvView& kv, int kv_head, const int32_t* tokens, int64_t count,
                 void* v_out, void* k_out) {
  const int d = kv.head_dim, P = kv.page_tokens;
  const size_t es = dtype_size(kv.dtype), row_bytes = d * es;
  const KvHeadView& head = kv.heads[kv_head];
  auto* vo = static_cast<std::byte*>(v_out);
  switch (row_bytes) {
    case 128:
      gather_v_rows<128>(head, P, d, es, tokens, count, vo, row_bytes);
      break;
    case 256:
      gather_v_rows<256>(head, P, d, es, tokens, count, vo, row_bytes);
      break;
    case 512:
      gather_v_rows<512>(head, P, d, es, tokens, count, vo, row_bytes);
      break;
    default:
      gather_v_rows<0>(head, P, d, es, tokens, count, vo, row_bytes);
  }
  auto* ko = static_cast<std::byte*>(k_out);
  for (int64_t i = 0; ko && i < count; ++i) {  // K is a column of the blocked page
    const PageRef& p = head.pages[tokens[i] / P];
    for (int j = 0; j < d; ++j)
      std::memcpy(ko + (i * d + j) * es, p.k + k_block_offset(j, tokens[i] % P, P) * es, es);
  }
}

int64_t ascending_union(const int32_t* lists, const int64_t* counts, int n_lists, int64_t stride,
                        int32_t* union_out, int32_t* slot_out) {
  constexpr int kMaxLists = 64;
  if (n_lists < 0 || n_lists > kMaxLists)
    throw Error("ascending_union: " + std::to_string(n_lists) + " lists (at most 64)",
                "merge at most one GQA group's lists at a time");
  int64_t at[kMaxLists] = {};
  int64_t u = 0;
  for (;;) {
    int32_t next = std::numeric_limits<int32_t>::max();
    bool any = false;
    for (int i = 0; i < n_lists; ++i)
      if (at[i] < counts[i]) {
        next = std::min(next, lists[i * stride + at[i]]);
        any = true;
      }
    if (!any) return u;
    union_out[u] = next;
    for (int i = 0; i < n_lists; ++i)
      if (at[i] < counts[i] && lists[i * stride + at[i]] == next)
        slot_out[i * stride + at[i]++] = static_cast<int32_t>(u);
    ++u;
  }
}

namespace {

// The external side's partial (o, lse) per query head: softmax over its logits, weighted sum
// of its V rows (dense per head, or indexed into its group's shared block), by the engine.
void external_partial(const LogitMergeArgs& a, int d, ThreadPool& pool, SimdLevel simd, float* o,
                      float* lse) {
  const KernelTable& kt = kernels_for(simd, d);
  const size_t es = dtype_size(a.ext_dtype);
  const bool shared = a.ext_rows != nullptr;
  pool.parallel_for(a.q_heads, [&](int64_t h, int) {
    thread_local std::vector<float> weights;
    weights.resize(static_cast<size_t>(a.n_ext));
    RowsJob job;
    job.logits = a.ext_logits + h * a.n_ext;
    job.n = a.n_ext;
    job.rows = static_cast<const std::byte*>(a.ext_v) +
               (shared ? static_cast<size_t>(h / a.ext_group) * a.ext_block_rows
                       : static_cast<size_t>(h) * a.n_ext) *
                   d * es;
    job.at = shared ? a.ext_rows + h * a.n_ext : nullptr;
    job.head_dim = d;
    job.dtype = a.ext_dtype;
    job.weights = weights.data();
    job.o = o + h * d;
    job.lse = lse + h;
    kt.rows(job);
  });
}

// Shared external rows: every group whole, every finite entry's row inside its block.
void check_shared_rows(const LogitMergeArgs& a) {
  if (!a.ext_rows || a.n_ext == 0) return;
  if (a.ext_group < 1 || a.q_heads % a.ext_group != 0 || a.ext_block_rows < 0)
    throw Error("logit_merge_attention: shared external rows need q_heads (" +
                    std::to_string(a.q_heads) + ") a multiple of ext_group (" +
                    std::to_string(a.ext_group) + ") and ext_block_rows >= 0",
                "pass ext_group = query heads per KV head and the block's row count");
  for (int64_t e = 0; e < static_cast<int64_t>(a.q_heads) * a.n_ext; ++e)
    if (a.ext_logits[e] != -std::numeric_limits<float>::infinity() &&
        (a.ext_rows[e] < 0 || a.ext_rows[e] >= a.ext_block_rows))
      throw Error("logit_merge_attention: external entry " + std::to_string(e) + " reads row " +
                      std::to_string(a.ext_rows[e]) + " of a block of " +
                      std::to_string(a.ext_block_rows),
                  "index rows within ext_block_rows (padding entries carry -inf logits)");
}

}  // namespace

void logit_merge_attention(const LogitMergeArgs& a, ThreadPool& pool, SimdLevel simd) {
  HB_NVTX_RANGE("hb.cpu.logit_merge_attention");
  const int d = a.local.head_dim;
  if (d <= 0 || d > 512)
    throw Error("logit_merge_attention: head_dim " + std::to_string(d) + " out of range",
                "set args.local.head_dim (1..512) even when there are no local tokens");
  check_shared_rows(a);
  const size_t n = static_cast<size_t>(a.q_heads) * d;
  thread_local std::vector<float> buf;
  buf.resize(2 * n + 2 * a.q_heads);
  float *o_ext = buf.data(), *o_loc = o_ext + n, *l_ext = o_loc + n, *l_loc = l_ext + a.q_heads;
  external_partial(a, d, pool, simd, o_ext, l_ext);
  const bool has_local = a.local.kv_heads > 0 && a.local.heads;
  if (has_local) {
    DecodeAttentionArgs loc;
    loc.q = a.q;
    loc.kv = a.local;
    loc.q_heads = a.q_heads;
    loc.scale = a.scale;
    loc.o = o_loc;
    loc.lse = l_loc;
    decode_attention(&loc, 1, pool, simd);
  }
  // External side first: the merge order is fixed so results are reproducible.
  const float* o_parts[2] = {o_ext, o_loc};
  const float* l_parts[2] = {l_ext, l_loc};
  merge_partials(has_local ? 2 : 1, o_parts, l_parts, a.q_heads, d, a.o, a.lse);
}

}  // namespace hb::cpu
