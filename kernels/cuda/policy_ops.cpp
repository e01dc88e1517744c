// The CUDA accelerator's ops (core/accelerator_ops.h) dispatched to its methods, and its policy
// kernels (core/policy_args.h): host arrays of the arguments uploaded with the launch, page
// tables of the metadata views resolved, limits checked; the kernels are in policy_kernels.cu.
// Each op starts its busy time at gpu_begins(), right before its launch, so validation and
// descriptor building stay host time.
#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "core/error.h"
#include "kernels/cuda/accelerator_impl.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/policy_launch.h"

namespace hb::cuda {

namespace {

// Rows that become grid.y of a launch: CUDA allows 65535.
void check_grid_rows(int64_t rows, const char* op) {
  if (rows > 65535)
    throw Error(std::string(op) + ": " + std::to_string(rows) +
                    " rows exceed the 65535 a CUDA grid dimension holds",
                "use a smaller batch", kExitUsage);
}

void check_width(int width, const char* op) {
  if (width < 1 || width > 256)
    throw Error(std::string(op) + ": width " + std::to_string(width) +
                    " is outside the CUDA policy kernels' 1..256",
                "use a model preset, or --accelerator cpu", kExitUsage);
}

}  // namespace

void CudaAcceleratorImpl::enqueue(const AcceleratorOp& op) {
  std::visit(
      [&](const auto& a) {
        using A = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<A, HeavyHitterArgs>)
          heavy_hitter_update(a);
        else if constexpr (std::is_same_v<A, PageBoundFoldArgs>)
          fold_page_bounds(a);
        else if constexpr (std::is_same_v<A, PageBoundScoreArgs>)
          score_page_bounds(a);
        else if constexpr (std::is_same_v<A, TopkRowsArgs>)
          topk_rows(a);
        else if constexpr (std::is_same_v<A, GroupMaxArgs>)
          group_max_rows(a);
        else if constexpr (std::is_same_v<A, ProjectRowsArgs>)
          project_rows(a);
        else if constexpr (std::is_same_v<A, RowsToPagesArgs>)
          rows_to_pages(a);
        else if constexpr (std::is_same_v<A, StreamAttentionArgs>)
          stream_attention(a.seqs, a.batch, a.chunk_tokens);
        else
          enqueue_fallback(op);  // host_kernel: not supported (supports())
      },
      op);
}

void CudaAcceleratorImpl::heavy_hitter_update(const HeavyHitterArgs& a) {
  Op op(*this, "hb.cuda.heavy_hitter_update", Op::Start::deferred);
  const size_t rows = static_cast<size_t>(a.batch) * a.kv_heads;
  if (rows == 0 || a.cap <= 0) return;
  check_grid_rows(static_cast<int64_t>(rows), "heavy_hitter_update");
  std::vector<int64_t> host(a.filled, a.filled + a.batch);
  host.insert(host.end(), a.fresh_slot, a.fresh_slot + rows);
  Scratch desc = upload_scratch(host.data(), host.size() * 8, "heavy_hitter_update slots");
  HeavyHitterLaunch L{a.batch,
                      a.q_heads,
                      a.kv_heads,
                      a.cap,
                      a.logits,
                      a.lse,
                      a.scores,
                      a.tags,
                      a.victims,
                      desc.as<int64_t>(),
                      desc.as<int64_t>() + a.batch,
                      a.fresh_tag,
                      a.recent_from};
  op.gpu_begins();
  launch_heavy_hitter(L, ctx_->stream);
  HB_CUDA_CHECK_LAUNCH("heavy_hitter kernels",
                       std::to_string(rows) + " heads x " + std::to_string(a.cap) + " slots");
}

void CudaAcceleratorImpl::fold_page_bounds(const PageBoundFoldArgs& a) {
  Op op(*this, "hb.cuda.fold_page_bounds", Op::Start::deferred);
  if (a.rows <= 0) return;
  check_width(a.head_dim, "fold_page_bounds");
  std::vector<void*> blocks(a.c_blocks, a.c_blocks + a.rows);
  blocks.insert(blocks.end(), a.r_blocks, a.r_blocks + a.rows);
  Scratch desc = upload_scratch(blocks.data(), blocks.size() * sizeof(void*), "page bound blocks");
  BoundFoldLaunch L{
      a.rows,           a.head_dim, a.block_slots, a.slot,           a.first ? 1 : 0,
      kv_type(a.dtype), a.keys,     a.boxes,       desc.as<void*>(), desc.as<void*>() + a.rows};
  op.gpu_begins();
  launch_bound_fold(L, ctx_->stream);
  HB_CUDA_CHECK_LAUNCH("bound_fold kernel", std::to_string(a.rows) + " rows");
}

void CudaAcceleratorImpl::score_page_bounds(const PageBoundScoreArgs& a) {
  Op op(*this, "hb.cuda.score_page_bounds", Op::Start::deferred);
  if (a.batch <= 0 || a.n_pages <= 0) return;
  const PagedKvView& v0 = a.centers[0];
  check_width(v0.head_dim, "score_page_bounds");
  check_grid_rows(static_cast<int64_t>(a.batch) * a.q_heads, "score_page_bounds");
  // [centers of every sequence's heads][radii of every sequence's heads]
  std::vector<HeadDesc> heads;
  for (const PagedKvView* plane : {a.centers, a.radii})
    for (int b = 0; b < a.batch; ++b)
      for (int h = 0; h < plane[b].kv_heads; ++h) {
        const KvHeadView& hv = plane[b].heads[h];
        const int64_t blocks = (hv.num_tokens + v0.page_tokens - 1) / v0.page_tokens;
        heads.push_back(HeadDesc{tables_.get(hv.pages, blocks, ring_), 0, 0, hv.num_tokens, 0});
      }
  Scratch desc =
      upload_scratch(heads.data(), heads.size() * sizeof(HeadDesc), "page bound descriptors");
  const float scale = a.scale > 0 ? a.scale : 1.0f / std::sqrt(static_cast<float>(v0.head_dim));
  BoundScoreLaunch L{a.batch,
                     a.q_heads,
                     v0.kv_heads,
                     v0.head_dim,
                     v0.page_tokens,
                     kv_type(v0.dtype),
                     a.q,
                     desc.as<HeadDesc>(),
                     desc.as<HeadDesc>() + heads.size() / 2,
                     a.n_pages,
                     scale,
                     a.scores,
                     a.stride};
  op.gpu_begins();
  launch_bound_scores(L, ctx_->stream);
  HB_CUDA_CHECK_LAUNCH("bound_scores kernel", std::to_string(a.batch * a.q_heads) + " heads x " +
                                                  std::to_string(a.n_pages) + " pages");
}

void CudaAcceleratorImpl::topk_rows(const TopkRowsArgs& a) {
  Op op(*this, "hb.cuda.topk_rows", Op::Start::deferred);
  const int64_t k = std::clamp<int64_t>(a.k, 0, std::max<int64_t>(a.n, 0));
  if (a.rows <= 0 || k == 0) return;
  TopkLaunch L{a.values, a.rows, a.n, a.stride, k, a.idx_out};
  op.gpu_begins();
  launch_topk(L, ctx_->stream);
  HB_CUDA_CHECK_LAUNCH("topk kernel", std::to_string(a.rows) + " rows, top " + std::to_string(k) +
                                          " of " + std::to_string(a.n));
}

void CudaAcceleratorImpl::group_max_rows(const GroupMaxArgs& a) {
  Op op(*this, "hb.cuda.group_max_rows", Op::Start::deferred);
  if (a.group < 1 || a.rows % a.group != 0)
    throw Error("group_max_rows: " + std::to_string(a.rows) + " rows are not whole groups of " +
                    std::to_string(a.group),
                {}, kExitUsage);
  check_grid_rows(a.rows / a.group, "group_max_rows");
  GroupMaxLaunch L{a.in, a.rows, a.group, a.n, a.stride, a.out, a.out_stride, a.alpha, a.counts};
  op.gpu_begins();
  launch_group_max(L, ctx_->stream);
  HB_CUDA_CHECK_LAUNCH("group_max kernels",
                       std::to_string(a.rows) + " rows x " + std::to_string(a.n));
}

void CudaAcceleratorImpl::project_rows(const ProjectRowsArgs& a) {
  Op op(*this, "hb.cuda.project_rows", Op::Start::deferred);
  if (a.rows <= 0) return;
  if (a.rows_per_proj < 1 || a.cols > a.out_width)
    throw Error("project_rows: rows_per_proj must be >= 1 and cols <= out_width", {}, kExitUsage);
  ProjectLaunch L{a.x,    a.x_stride,  a.rows, a.dim, a.rows_per_proj,
                  a.cols, a.out_width, a.proj, a.out};
  op.gpu_begins();
  launch_project(L, ctx_->stream);
  HB_CUDA_CHECK_LAUNCH("project kernel", std::to_string(a.rows) + " rows");
}

void CudaAcceleratorImpl::rows_to_pages(const RowsToPagesArgs& a) {
  Op op(*this, "hb.cuda.rows_to_pages", Op::Start::deferred);
  if (a.groups <= 0) return;
  check_grid_rows(a.groups, "rows_to_pages");
  RowsToPagesLaunch L{a.groups,
                      a.width,
                      a.page_tokens,
                      a.src_f32 ? 1 : 0,
                      a.zero_tail ? 1 : 0,
                      a.count,
                      a.first_slot,
                      kv_type(a.dtype),
                      a.k_src,
                      a.v_src,
                      static_cast<int64_t>(a.src_stride),
                      a.k_dst,
                      a.v_dst,
                      static_cast<int64_t>(a.dst_stride)};
  op.gpu_begins();
  launch_rows_to_pages(L, ctx_->stream);
  HB_CUDA_CHECK_LAUNCH("rows_to_pages kernel",
                       std::to_string(a.groups) + " groups x " + std::to_string(a.count) + " rows");
}

}  // namespace hb::cuda
