#pragma once
// The policy kernels of core/policy_args.h on CPU threads: what the cpu accelerator queues for
// H2O, Quest and InfiniGen, built from the token and page mechanisms (token_select.h,
// page_meta.h, page_pack.h, topk_select.h, select.h). Host arrays in the args are used as
// given: the accelerator copies them at enqueue.
#include "core/policy_args.h"
#include "core/thread_pool.h"

namespace hb::cpu {

void heavy_hitter_update(const HeavyHitterArgs& a, ThreadPool& pool);
void fold_page_bounds(const PageBoundFoldArgs& a);
void score_page_bounds(const PageBoundScoreArgs& a, ThreadPool& pool);
void topk_rows_ascending(const TopkRowsArgs& a, ThreadPool& pool);
void group_max_rows(const GroupMaxArgs& a);
void project_rows(const ProjectRowsArgs& a);
void rows_to_pages(const RowsToPagesArgs& a);

}  // namespace hb::cpu
