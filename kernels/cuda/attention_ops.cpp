// The CUDA accelerator's attention operations: validation, descriptors, split planning and
// launches. Kernels are in the .cu files; this file decides what they are asked to do.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "core/error.h"
#include "kernels/cuda/accelerator_impl.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/decode_layout.h"
#include "kernels/cuda/launch_plan.h"

namespace hb::cuda {

KvType kv_type(DType t) {
  switch (t) {
    case DType::f16:
      return KvType::f16;
    case DType::bf16:
      return KvType::bf16;
    case DType::f32:
      return KvType::f32;
  }
  return KvType::f16;
}

namespace {

std::string dtype_str(KvType t) {
  return t == KvType::f16 ? "fp16" : t == KvType::bf16 ? "bf16" : "fp32";
}

float resolve_scale(float scale, int head_dim) {
  return scale > 0 ? scale : 1.0f / std::sqrt(static_cast<float>(head_dim));
}

int64_t pages_for(int64_t tokens, int page_tokens) {
  return (tokens + page_tokens - 1) / page_tokens;
}

// Kernels index tokens relative to a head's first page with 32-bit ints.
void check_token_range(int64_t end, const char* op) {
  if (end >= std::numeric_limits<int32_t>::max())
    throw Error(std::string(op) + ": " + std::to_string(end) +
                    " tokens in one KV head is beyond the 2^31 the CUDA kernels index",
                "use shorter sequences", kExitUsage);
}

void check_head_dim(int head_dim, const char* op) {
  // 256: two 64-token stages of K and V at head_dim 256 already take 128 KiB of shared memory.
  if (head_dim < 8 || head_dim % 8 != 0 || head_dim > 256)
    throw Error(std::string(op) + ": head_dim " + std::to_string(head_dim) +
                    " is not supported by the CUDA kernels (a multiple of 8, at most 256)",
                "use a model preset, or --accelerator cpu", kExitUsage);
}

}  // namespace

std::string LaunchShape::describe() const {
  return std::to_string(q_heads) + "q/" + std::to_string(kv_heads) + "kv x" +
         std::to_string(head_dim) + " " + dtype_str(dtype) + ", page " +
         std::to_string(page_tokens);
}

LaunchShape CudaAcceleratorImpl::check_shape(const DecodeAttentionArgs* seqs, int batch,
                                             const char* op) const {
  const PagedKvView& kv = seqs[0].kv;
  LaunchShape s;
  s.q_heads = seqs[0].q_heads;
  s.kv_heads = kv.kv_heads;
  s.head_dim = kv.head_dim;
  s.page_tokens = kv.page_tokens;
  s.dtype = kv_type(kv.dtype);
  if (s.kv_heads <= 0 || s.q_heads <= 0 || s.q_heads % s.kv_heads != 0 || !kv.heads)
    throw Error(std::string(op) + ": impossible shape " + s.describe() +
                    " (query heads must be a positive multiple of the KV heads, and the view must "
                    "list its heads)",
                {}, kExitUsage);
  check_head_dim(s.head_dim, op);
  if (s.page_tokens <= 0 || s.page_tokens % 16 != 0)
    throw Error(std::string(op) + ": page size " + std::to_string(s.page_tokens) +
                    " is not a multiple of 16 tokens",
                "use --page-tokens 16, 32 or 64", kExitUsage);
  if (s.dtype == KvType::f32)
    throw Error(
        std::string(op) + ": the CUDA attention kernels read fp16 or bf16 KV; this cache is fp32",
        "use --kv-dtype fp16 or bf16, or --accelerator cpu", kExitUsage);
  s.group = s.q_heads / s.kv_heads;
  for (int b = 1; b < batch; ++b) {
    const PagedKvView& o = seqs[b].kv;
    if (seqs[b].q_heads != s.q_heads || o.kv_heads != s.kv_heads || o.head_dim != s.head_dim ||
        o.page_tokens != s.page_tokens || kv_type(o.dtype) != s.dtype || !o.heads)
      throw Error(std::string(op) + ": sequence " + std::to_string(b) +
                      " of the batch has a different shape than sequence 0 (" + s.describe() +
                      "); one call takes one shape",
                  "issue one call per shape", kExitUsage);
  }
  return s;
}

int CudaAcceleratorImpl::resident_ctas(const LaunchShape& s, bool with_v) const {
  return ctx_->info.sm_count *
         decode_ctas_per_sm(decode_gmax(s.group), with_v, s.dtype, s.head_dim);
}

DecodeLaunch CudaAcceleratorImpl::decode_launch(const LaunchShape& s, int batch,
                                                bool with_v) const {
  DecodeLaunch L{};
  L.batch = batch;
  L.q_heads = s.q_heads;
  L.kv_heads = s.kv_heads;
  L.head_dim = s.head_dim;
  L.page_tokens = s.page_tokens;
  L.page_shift = decode_page_shift(s.page_tokens);
  L.group = s.group;
  L.gmax = decode_gmax(s.group);
  L.head_chunks = decode_head_chunks(s.group, L.gmax);
  L.splits = 1;
  L.tiles_per_split = 1;
  L.with_v = with_v ? 1 : 0;
  L.dtype = s.dtype;
  return L;
}

Scratch CudaAcceleratorImpl::upload_scratch(const void* host, size_t bytes, const char* what) {
  Scratch s(*ctx_, bytes, what);
  ring_.upload(s.get(), host, bytes, ctx_->stream);
  return s;
}

namespace {

// Sequence and head descriptors packed into one upload: [SeqDesc x batch][HeadDesc x heads].
struct Descriptors {
  std::vector<SeqDesc> seqs;
  std::vector<HeadDesc> heads;
  std::vector<unsigned char> pack() const {
    const size_t a = seqs.size() * sizeof(SeqDesc), b = heads.size() * sizeof(HeadDesc);
    std::vector<unsigned char> out(a + b);
    if (a) std::memcpy(out.data(), seqs.data(), a);
    if (b) std::memcpy(out.data() + a, heads.data(), b);
    return out;
  }
};
static_assert(sizeof(SeqDesc) % alignof(HeadDesc) == 0, "HeadDescs follow the SeqDescs aligned");

}  // namespace

void CudaAcceleratorImpl::decode_attention(const DecodeAttentionArgs* seqs, int batch) {
  Op op(*this, "hb.cuda.decode_attention", Op::Start::deferred);
  if (batch <= 0) return;
  const LaunchShape s = check_shape(seqs, batch, "decode_attention");
  Descriptors d;
  d.seqs.resize(batch);
  d.heads.resize(static_cast<size_t>(batch) * s.kv_heads);
  int64_t max_tiles = 0;
  bool logits = false;
  for (int b = 0; b < batch; ++b) {
    const DecodeAttentionArgs& a = seqs[b];
    d.seqs[b] = SeqDesc{
        a.q, a.o, a.lse, a.logits_out, a.logits_stride, resolve_scale(a.scale, s.head_dim), 0};
    logits = logits || a.logits_out != nullptr;
    for (int h = 0; h < s.kv_heads; ++h) {
      const KvHeadView& v = a.kv.heads[h];
      const TokenRange r = clamp_range(a.token_begin, a.token_end, v.num_tokens);
      check_token_range(r.end, "decode_attention");
      const DevPage* pages = tables_.get(v.pages, pages_for(r.end, s.page_tokens), ring_);
      d.heads[static_cast<size_t>(b) * s.kv_heads + h] =
          HeadDesc{pages, 0, r.begin, r.end, r.begin};
      max_tiles = std::max(max_tiles, tiles_covering(r, kDecodeTile));
    }
  }
  DecodeLaunch L = decode_launch(s, batch, true);
  const SplitPlan plan =
      plan_splits(max_tiles, int64_t{batch} * s.kv_heads * L.head_chunks, resident_ctas(s, true));
  L.splits = plan.splits;
  L.tiles_per_split = plan.tiles_per_split;
  L.slots = plan.splits;
  L.direct = plan.splits == 1 ? 1 : 0;
  L.write_logits = logits ? 1 : 0;

  const auto packed = d.pack();
  Scratch desc = upload_scratch(packed.data(), packed.size(), "decode_attention descriptors");
  L.seqs = desc.as<SeqDesc>();
  L.heads =
      reinterpret_cast<const HeadDesc*>(desc.as<unsigned char>() + d.seqs.size() * sizeof(SeqDesc));
  const int64_t rows = int64_t{batch} * s.q_heads;
  Scratch part;
  if (!L.direct) {
    part = Scratch(*ctx_, static_cast<size_t>(rows * L.slots * (s.head_dim + 1)) * sizeof(float),
                   "decode_attention partials");
    L.part_o = part.as<float>();
    L.part_lse = L.part_o + rows * L.slots * s.head_dim;
  }
  const std::string what = "batch " + std::to_string(batch) + ", " + s.describe() + ", " +
                           std::to_string(max_tiles) + " tiles, " + std::to_string(L.splits) +
                           " splits";
  op.gpu_begins();
  launch_decode(L, ctx_->stream);
  HB_CUDA_CHECK_LAUNCH("decode_attention kernel", what);
  if (!L.direct) {
    HB_NVTX_RANGE("hb.cuda.merge_splits");
    launch_split_merge(
        SplitMergeLaunch{L.seqs, batch, s.q_heads, s.head_dim, L.slots, L.part_o, L.part_lse},
        ctx_->stream);
    HB_CUDA_CHECK_LAUNCH("split merge kernel", what);
  }
}

void CudaAcceleratorImpl::score_logits(const float* q, int q_heads, const PagedKvView& kv,
                                       int64_t begin, int64_t end, float scale, float* logits,
                                       int64_t stride) {
  Op op(*this, "hb.cuda.score_logits", Op::Start::deferred);
  if (!logits) return;
  if (begin < 0)
    throw Error("score_logits: negative token_begin " + std::to_string(begin), {}, kExitUsage);
  DecodeAttentionArgs a;
  a.q = q;
  a.kv = kv;
  a.q_heads = q_heads;
  const LaunchShape s = check_shape(&a, 1, "score_logits");
  Descriptors d;
  d.seqs = {SeqDesc{q, nullptr, nullptr, logits, stride, resolve_scale(scale, s.head_dim), 0}};
  int64_t max_tiles = 0;
  for (int h = 0; h < s.kv_heads; ++h) {
    const KvHeadView& v = kv.heads[h];
    const TokenRange r = clamp_range(begin, end, v.num_tokens);
    check_token_range(r.end, "score_logits");
    d.heads.push_back(HeadDesc{tables_.get(v.pages, pages_for(r.end, s.page_tokens), ring_), 0,
                               r.begin, r.end, begin});
    max_tiles = std::max(max_tiles, tiles_covering(r, kDecodeTile));
  }
  if (max_tiles == 0) return;
  DecodeLaunch L = decode_launch(s, 1, false);
  const SplitPlan plan =
      plan_splits(max_tiles, int64_t{s.kv_heads} * L.head_chunks, resident_ctas(s, false));
  L.splits = plan.splits;
  L.tiles_per_split = plan.tiles_per_split;
  L.write_logits = 1;
  const auto packed = d.pack();
  Scratch desc = upload_scratch(packed.data(), packed.size(), "score_logits descriptors");
  L.seqs = desc.as<SeqDesc>();
  L.heads = reinterpret_cast<const HeadDesc*>(desc.as<unsigned char>() + sizeof(SeqDesc));
  op.gpu_begins();
  launch_decode(L, ctx_->stream);
  HB_CUDA_CHECK_LAUNCH("score_logits kernel", s.describe() + ", tokens [" + std::to_string(begin) +
                                                  ", " + std::to_string(end) + ")");
}

namespace {

// The external partials of logit_merge_attention: enough splits to cover the SMs, at least
// 128 tokens each, over the caller's logits and V rows (validated here).
ExtLaunch external_merge_launch(const LogitMergeArgs& args, int sm_count) {
  ExtLaunch E{};
  if (args.n_ext <= 0) return E;
  if (!args.ext_logits || !args.ext_v)
    throw Error("logit_merge_attention: n_ext > 0 but no external logits or V rows", {},
                kExitUsage);
  if (reinterpret_cast<uintptr_t>(args.ext_v) % 16 != 0)
    throw Error("logit_merge_attention: external V rows must be 16-byte aligned", {}, kExitUsage);
  const int64_t want =
      std::max<int64_t>(1, std::min<int64_t>((args.n_ext + 127) / 128,
                                             (2 * sm_count + args.q_heads - 1) / args.q_heads));
  E.tokens_per_split = (args.n_ext + want - 1) / want;
  E.splits = static_cast<int>((args.n_ext + E.tokens_per_split - 1) / E.tokens_per_split);
  if (args.ext_rows &&
      (args.ext_group < 1 || args.q_heads % args.ext_group != 0 || args.ext_block_rows < 0))
    throw Error("logit_merge_attention: shared external rows need q_heads (" +
                    std::to_string(args.q_heads) + ") a multiple of ext_group (" +
                    std::to_string(args.ext_group) + ") and ext_block_rows >= 0",
                {}, kExitUsage);
  E.logits = args.ext_logits;
  E.v = args.ext_v;
  E.rows = args.ext_rows;
  E.group = args.ext_group;
  E.block_rows = args.ext_block_rows;
  E.n = args.n_ext;
  E.q_heads = args.q_heads;
  E.head_dim = args.local.head_dim;
  E.v_dtype = kv_type(args.ext_dtype);
  check_grid(E.q_heads, E.splits, 1, "logit_merge_attention external partials");
  return E;
}

}  // namespace

DecodeLaunch CudaAcceleratorImpl::local_merge_launch(const LogitMergeArgs& args,
                                                     std::vector<HeadDesc>& heads, LaunchShape& s) {
  DecodeAttentionArgs a;
  a.q = args.q;
  a.kv = args.local;
  a.q_heads = args.q_heads;
  s = check_shape(&a, 1, "logit_merge_attention");
  int64_t max_tiles = 0;
  for (int h = 0; h < s.kv_heads; ++h) {
    const KvHeadView& v = args.local.heads[h];
    const TokenRange r = clamp_range(0, -1, v.num_tokens);
    check_token_range(r.end, "logit_merge_attention");
    heads.push_back(HeadDesc{tables_.get(v.pages, pages_for(r.end, s.page_tokens), ring_), 0,
                             r.begin, r.end, 0});
    max_tiles = std::max(max_tiles, tiles_covering(r, kDecodeTile));
  }
  DecodeLaunch L = decode_launch(s, 1, true);
  const SplitPlan plan =
      plan_splits(max_tiles, int64_t{s.kv_heads} * L.head_chunks, resident_ctas(s, true));
  L.splits = plan.splits;
  L.tiles_per_split = plan.tiles_per_split;
  return L;
}

void CudaAcceleratorImpl::logit_merge_attention(const LogitMergeArgs& args) {
  Op op(*this, "hb.cuda.logit_merge_attention", Op::Start::deferred);
  const bool has_local = args.local.kv_heads > 0 && args.local.heads != nullptr;
  const int D = args.local.head_dim;
  check_head_dim(D, "logit_merge_attention");
  if (args.q_heads <= 0)
    throw Error("logit_merge_attention: q_heads must be positive", {}, kExitUsage);
  const float scale = resolve_scale(args.scale, D);
  const std::string what = std::to_string(args.q_heads) + " q heads x" + std::to_string(D) + ", " +
                           std::to_string(args.n_ext) + " external tokens";

  // Local partials over the resident KV, then the external ones, into one set of slots.
  Descriptors d;
  d.seqs = {SeqDesc{args.q, args.o, args.lse, nullptr, 0, scale, 0}};
  DecodeLaunch L{};
  LaunchShape s;
  if (has_local) L = local_merge_launch(args, d.heads, s);
  ExtLaunch E = external_merge_launch(args, ctx_->info.sm_count);
  const int local_slots = has_local ? L.splits : 0;
  const int slots = local_slots + E.splits;
  const int64_t rows = args.q_heads;
  Scratch part(*ctx_, static_cast<size_t>(rows * std::max(slots, 1) * (D + 1)) * sizeof(float),
               "logit merge partials");
  float* part_o = part.as<float>();
  float* part_lse = part_o + rows * std::max(slots, 1) * D;
  const auto packed = d.pack();
  Scratch desc = upload_scratch(packed.data(), packed.size(), "logit_merge descriptors");
  const SeqDesc* dev_seq = desc.as<SeqDesc>();
  op.gpu_begins();
  if (has_local) {
    L.seqs = dev_seq;
    L.heads = reinterpret_cast<const HeadDesc*>(desc.as<unsigned char>() + sizeof(SeqDesc));
    L.slots = slots;
    L.slot_offset = 0;
    L.part_o = part_o;
    L.part_lse = part_lse;
    launch_decode(L, ctx_->stream);
    HB_CUDA_CHECK_LAUNCH("logit merge local kernel", what + ", " + s.describe());
  }
  if (E.splits > 0) {
    E.slots = slots;
    E.slot_offset = local_slots;
    E.part_o = part_o;
    E.part_lse = part_lse;
    launch_ext_partial(E, ctx_->stream);
    HB_CUDA_CHECK_LAUNCH("logit merge external kernel", what);
  }
  launch_split_merge(SplitMergeLaunch{dev_seq, 1, args.q_heads, D, slots, part_o, part_lse},
                     ctx_->stream);
  HB_CUDA_CHECK_LAUNCH("logit merge kernel", what);
}

void CudaAcceleratorImpl::merge_partials(int n, const float* const* o_parts,
                                         const float* const* lse_parts, int heads, int head_dim,
                                         float* o_out, float* lse_out) {
  Op op(*this, "hb.cuda.merge_partials", Op::Start::deferred);
  if (heads <= 0 || head_dim <= 0) return;
  // Up to kMaxMergeParts per launch; later launches fold the running result in as part 0
  // (in-place output is allowed), keeping index order.
  op.gpu_begins();
  int next = 0;
  do {
    PartsMergeLaunch M{};
    M.heads = heads;
    M.head_dim = head_dim;
    M.o_out = o_out;
    M.lse_out = lse_out;
    if (next > 0) {
      M.o[0] = o_out;
      M.lse[0] = lse_out;
      M.n_parts = 1;
    }
    while (next < n && M.n_parts < kMaxMergeParts) {
      M.o[M.n_parts] = o_parts[next];
      M.lse[M.n_parts] = lse_parts[next];
      ++M.n_parts;
      ++next;
    }
    launch_parts_merge(M, ctx_->stream);
    HB_CUDA_CHECK_LAUNCH("merge_partials kernel", std::to_string(n) + " parts, " +
                                                      std::to_string(heads) + " heads x" +
                                                      std::to_string(head_dim));
  } while (next < n);
}

void CudaAcceleratorImpl::gather_rows(const PagedKvView& kv, int kv_head, const int32_t* tokens,
                                      int64_t count, void* v_out, void* k_out) {
  Op op(*this, "hb.cuda.gather_rows", Op::Start::deferred);
  if (count <= 0 || (!v_out && !k_out)) return;
  if (kv_head < 0 || kv_head >= kv.kv_heads || !kv.heads)
    throw Error("gather_rows: KV head " + std::to_string(kv_head) + " out of range", {},
                kExitUsage);
  const KvHeadView& v = kv.heads[kv_head];
  GatherLaunch G{};
  G.pages = tables_.get(v.pages, pages_for(v.num_tokens, kv.page_tokens), ring_);
  G.num_tokens = v.num_tokens;
  G.tokens = tokens;
  G.count = count;
  G.head_dim = kv.head_dim;
  G.page_tokens = kv.page_tokens;
  G.elem_bytes = static_cast<int32_t>(dtype_size(kv.dtype));
  G.v_out = v_out;
  G.k_out = k_out;
  op.gpu_begins();
  launch_gather(G, ctx_->stream);
  HB_CUDA_CHECK_LAUNCH("gather kernel",
                       std::to_string(count) + " rows x" + std::to_string(kv.head_dim));
}

void CudaAcceleratorImpl::page_minmax(const PagedKvView& kv, float* kmin, float* kmax,
                                      int64_t page_stride) {
  Op op(*this, "hb.cuda.page_minmax", Op::Start::deferred);
  if (kv.kv_heads <= 0 || !kv.heads) return;
  std::vector<HeadDesc> heads;
  int64_t max_pages = 0;
  for (int h = 0; h < kv.kv_heads; ++h) {
    const KvHeadView& v = kv.heads[h];
    const int64_t pages = pages_for(v.num_tokens, kv.page_tokens);
    heads.push_back(HeadDesc{tables_.get(v.pages, pages, ring_), 0, 0, v.num_tokens, 0});
    max_pages = std::max(max_pages, pages);
  }
  if (page_stride < max_pages)
    throw Error("page_minmax: page_stride " + std::to_string(page_stride) +
                    " is smaller than the " + std::to_string(max_pages) +
                    " pages of the longest head",
                {}, kExitUsage);
  Scratch desc =
      upload_scratch(heads.data(), heads.size() * sizeof(HeadDesc), "page_minmax descriptors");
  MinMaxLaunch M{desc.as<HeadDesc>(), kv.kv_heads, kv.head_dim, kv.page_tokens,
                 kv_type(kv.dtype),   page_stride, kmin,        kmax};
  op.gpu_begins();
  launch_page_minmax(M, max_pages, ctx_->stream);
  HB_CUDA_CHECK_LAUNCH("page_minmax kernel", std::to_string(kv.kv_heads) + " heads, " +
                                                 std::to_string(max_pages) + " pages");
}

}  // namespace hb::cuda
