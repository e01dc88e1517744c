#pragma once
// Launch arguments of the policy kernels (policy_kernels.cu), the CUDA side of core/policy_args.h:
// plain structs of device pointers (host arrays of the core args are uploaded by the launcher,
// policy_ops.cpp), shared by the host code and the kernels like kernel_args.h.
#include <cstdint>

#include "kernels/cuda/kernel_args.h"

namespace hb::cuda {

struct HeavyHitterLaunch {
  int32_t batch, q_heads, kv_heads;
  int64_t cap;
  const float* logits;
  const float* lse;
  float* scores;
  int64_t* tags;
  int32_t* victims;
  const int64_t* filled;      // [batch]
  const int64_t* fresh_slot;  // [batch][kv_heads]
  int64_t fresh_tag, recent_from;
};

struct BoundFoldLaunch {
  int32_t rows, head_dim, block_slots, slot, first;
  KvType dtype;
  const float* keys;
  float* boxes;
  void* const* c_blocks;  // [rows]
  void* const* r_blocks;  // [rows]
};

// centers / radii: [batch][kv_heads] heads whose pages are metadata blocks (DevPage::k).
struct BoundScoreLaunch {
  int32_t batch, q_heads, kv_heads, head_dim, block_slots;
  KvType dtype;
  const float* q;
  const HeadDesc* centers;
  const HeadDesc* radii;
  int64_t n_pages;
  float scale;
  float* scores;
  int64_t stride;
};

struct TopkLaunch {
  const float* values;
  int32_t rows;
  int64_t n, stride, k;  // k already clamped to [0, n]
  int32_t* idx_out;
};

struct GroupMaxLaunch {
  const float* in;
  int32_t rows, group;
  int64_t n, stride;
  float* out;
  int64_t out_stride;
  float alpha;
  int32_t* counts;
};

struct ProjectLaunch {
  const float* x;
  int64_t x_stride;
  int32_t rows, dim, rows_per_proj, cols, out_width;
  const float* proj;
  float* out;
};

struct RowsToPagesLaunch {
  int32_t groups, width, page_tokens, src_f32, zero_tail;
  int64_t count, first_slot;
  KvType dtype;
  const void* k_src;
  const void* v_src;
  int64_t src_stride;
  void* k_dst;
  void* v_dst;
  int64_t dst_stride;
};

void launch_heavy_hitter(const HeavyHitterLaunch& L, void* stream);
void launch_bound_fold(const BoundFoldLaunch& L, void* stream);
void launch_bound_scores(const BoundScoreLaunch& L, void* stream);
void launch_topk(const TopkLaunch& L, void* stream);
void launch_group_max(const GroupMaxLaunch& L, void* stream);
void launch_project(const ProjectLaunch& L, void* stream);
void launch_rows_to_pages(const RowsToPagesLaunch& L, void* stream);

}  // namespace hb::cuda
