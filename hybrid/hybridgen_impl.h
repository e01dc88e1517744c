#pragma once
// HybridGen's shared state (private to hybrid/): the pages' homes, the two views the step
// reads, the accelerator's buffers. Each mechanism's code lives in the file named after it:
//   logit_parallelism.cpp - mechanism 1: one overlapped decode step
//   feedback_scheduler.*  - mechanism 2 (a class of its own)
//   kv_mapping.*          - mechanism 3 (a class of its own: the policy and the page tables)
//   page_homes.cpp        - the paged cache: KvMapping's and the FIFO window's moves applied to
//                           the bytes, the views, the host arenas, the prompt's load
//   budget.cpp            - how the accelerator budget splits (window, hot slots, shipped rows)
//   hybridgen.cpp         - plan/load/inspection glue
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/step_io.h"
#include "hybrid/hybridgen.h"

namespace hb::hybrid {

inline constexpr float kNegInf = -std::numeric_limits<float>::infinity();

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
// Logit mode ships its gathered rows in this many pieces, each as soon as it is ready.
inline constexpr int64_t kUploadChunks = 4;

// One KV head of one sequence: its page table (KvMapping's) and the two views built from it.
struct HeadState : HeadPages {
  std::vector<PageRef> cpu_refs, acc_refs;  // the two views' page tables
  std::vector<int32_t> cpu_ids, acc_ids;    // page index of each view page
  int64_t last_k = 0;                       // rows shipped per query head at the last step
  std::vector<int64_t> cpu_k_pages_by_tier, cpu_v_pages_by_tier;
};

struct SeqState {
  std::unique_ptr<PagedKvCache> cache;
  std::vector<HeadState> heads;
  std::vector<KvHeadView> cpu_view, acc_view;
};

// One step's counters and clocks, filled part by part (logit_parallelism.cpp).
struct StepState {
  int s = 0;
  Traffic* tr = nullptr;
  int64_t syncs = 0, launches = 0;
  int64_t cpu_tok_sum = 0, acc_tok_sum = 0;
  bool has_cpu = false, approx = false;
  int64_t n_ext = 0;  // shipped rows per query head (padded to the largest k)
  // Shipped V rows per block (ship_rows=group: a block per (sequence, KV head), the largest
  // union of its query heads' rows; head: a block per query head, n_ext).
  int64_t block_rows = 0;
  // cpu_k_cap: per sequence, the first CPU-view position the CPU scores (a page multiple; 0
  // when the cap is off), and the tokens scored over all heads.
  std::vector<int64_t> scan_begin;
  int64_t scan_tok_sum = 0;
  int64_t transfer_ns = 0, acc_ns = 0, merge_ns = 0, wait_ns = 0;
  int64_t sync_q_wall = 0, sync_final_wall = 0;
  int64_t t_cpu0 = 0, t_score = 0, t_topk = 0, t_gather = 0, t_cpu1 = 0;
  int64_t t_pre_book = 0, t_book = 0;
  // The CPU's reads of the shipped V rows (the part of its side that scales with the rows).
  Traffic rows;
};

struct HybridGen::Impl {
  HybridGen& self;
  explicit Impl(HybridGen& s) : self(s) {}
  const HybridGenConfig& cfg() const { return self.cfg_; }

  const Problem* problem = nullptr;
  Platform platform;
  AttentionShape shape;
  int B = 1, P = 16, Hq = 0, Hkv = 0, d = 0, G = 1;
  size_t es = 2, block = 0;
  int64_t t_end = 0, pages_end = 0;
  bool logit = true, all_fit = false, semantic = true;
  KvMapping mapping;         // mechanism 3: host tiers, page tables' moves, promotion
  int64_t k_cap = 0;         // shipped rows per query head the buffers hold
  int64_t ccap = 0;          // logits scratch stride (max CPU tokens per head)
  int64_t first_window = 0;  // first page of the recent window (all heads, sequences)
  int64_t min_window_pages = 1;
  int64_t ext_bytes = 0;     // accelerator bytes of the shipped-row buffers
  int64_t budget_bytes = 0;  // accelerator bytes for KV pages + shipped rows (after step buffers)
  double ratio_limit = 1.0;  // ratio the shipped-row buffers allow at the longest context
  // run --kv-budget (Problem::kv_budget_tokens > 0): the accelerator pages (window + hot slots)
  // and the CPU top-k (k_cap, ratio pinned at 1) share the budget; "" when none.
  std::string budget_mapping;
  bool budgeted() const { return problem->kv_budget_tokens > 0; }
  std::string ext_note;

  std::unique_ptr<PageArena> acc_arena;
  std::vector<std::unique_ptr<PageArena>> k_arenas, v_arenas;  // per host tier, created on use
  std::vector<SeqState> seqs;
  std::unique_ptr<StepIO> io;
  Buffer o_loc, lse_loc, o_x, lse_x, ext_logits_dev, ext_v_dev, ext_rows_dev;   // accelerator
  Buffer ext_logits_host, ext_v_host, ext_rows_host, o_cpu_host, lse_cpu_host;  // staging
  std::vector<float> logits, topv;
  std::vector<int32_t> topi;
  std::vector<int64_t> krow;  // rows selected per (b, q head) this step
  // Shipped rows (logit mode): query heads per shipped block (G with ship_rows=group, else 1),
  // and each block's rows this step (the union of its query heads' selections, ascending).
  int ship_group = 1;
  bool shared_rows() const { return ship_group > 1; }
  std::vector<int32_t> urows;  // the groups' unions (ship_rows=group only)
  std::vector<int64_t> ucount;
  // Block `blk`'s rows this step (ucount[blk] of them): its group's union, or its head's top-k.
  const int32_t* shipped_rows(int64_t blk, int64_t n_ext) const {
    return (shared_rows() ? urows.data() : topi.data()) +
           static_cast<size_t>(blk * ship_group) * n_ext;
  }
  // Smallest shipped logit per (b, q head) of the last step (-inf: none): the bar a promoted
  // page's tokens must clear to count as hits when its score is refreshed.
  std::vector<float> kth_logit;
  // Per (sequence, query head): where the next fused selection starts, from this step's top-k
  // (select_hint; empty when off).
  std::vector<float> floor_hint;
  Buffer hot_logits_dev;               // accelerator: logits over the hot pages (refresh)
  std::vector<float> hot_logits_host;  // their copy on the host
  bool dirty = true;
  Traffic mig;  // migration traffic of the current step
  int64_t migrated_pages_step = 0;

  MemoryKind tier_kind(int t) const { return platform.host_tiers[t].location.kind; }
  PagedKvView cpu_view(int b) const {
    return PagedKvView{Hkv, d, P, shape.kv_dtype, seqs[b].cpu_view.data()};
  }
  PagedKvView acc_view(int b) const {
    return PagedKvView{Hkv, d, P, shape.kv_dtype, seqs[b].acc_view.data()};
  }

  void set_problem(const Problem& pr, const Platform& pl);

  // ---- budget.cpp
  // Splits the accelerator budget; false (with r's status and reason) when nothing fits.
  bool plan_budget(PlanResult& r);
  // run --kv-budget: resizes the layout so that the resident accelerator tokens plus the CPU
  // top-k equal the budget (budget.cpp); false (r oom) when that does not fit.
  bool apply_token_budget(int64_t acc_pages_fit, int64_t avail, int64_t page_slot,
                          int64_t row_bytes, PlanResult& r);

  // ---- page_homes.cpp: the paged cache under KvMapping (mechanism 3) and the FIFO window
  PageArena& k_arena(int t);
  PageArena& v_arena(int t);
  // KvMapping's moves of one KV head of one sequence, applied to the paged cache.
  class CacheMover;
  // The bytes of a page KvMapping moves (sequence s, KV head h, page i; `from` its old home).
  void bytes_to_host(SeqState& s, int h, int64_t i, const PageInfo& from, int kt, int vt);
  void bytes_to_acc(SeqState& s, int h, int64_t i, const PageInfo& from);
  void apply_window(int64_t pages_after, int64_t window_pages);
  void rebuild_views();
  void refresh_counts();
  void migrate_pass();
  int64_t hot_logit_tokens() const;  // per (b, q head) row of hot_logits_dev
  void refresh_hot_scores();
  // Before the budget: the fast and far host tiers; false (r says why) when unusable.
  bool choose_tiers(PlanResult& r);
  // After the budget: the host tiers' capacity for the older pages; false when short.
  bool check_host_capacity(PlanResult& r);
  void reserve_host_arenas();
  void load_prompt();

  // ---- logit_parallelism.cpp (mechanism 1)
  void step_structure(int s, StepState& st);
  void count_tokens(int64_t cpu_k_cap, StepState& st);
  void choose_rows(double ratio, StepState& st);
  void download_q(StepState& st);
  void accelerator_attention(std::vector<DecodeAttentionArgs>& args, StepState& st);
  void cpu_logits_topk_gather(StepState& st, float scale);
  void gather_shipped_rows(StepState& st);
  void cpu_exact_partial(StepState& st, float scale);
  void upload_blocks(StepState& st, int64_t b0, int64_t b1);
  void upload_cpu_part(StepState& st);
  void merge(StepState& st, float scale);
  void bookkeeping(StepState& st, StepResult& out);
  void count_hits(const StepState& st, std::vector<int64_t>& v_rows_by_tier);
  void fill_attended(int64_t n_ext, StepResult& out);
  // Set by bookkeeping when the last step's attended list is owed (HybridGen::fill_attended).
  bool attended_owed = false;
  int64_t attended_n_ext = 0;
  void count_traffic(StepState& st, const std::vector<int64_t>& v_rows_by_tier);
  void record_phases(const StepState& st, StepResult& out) const;
  // What the scheduler balances: the CPU side, the accelerator's attention, the upload, and the
  // rows' part of the CPU side (-1: none), by the clock or by the platform's model.
  struct SideTimes {
    double cpu_ns, accelerator_ns, transfer_ns, rows_ns;
  };
  SideTimes measured_side_times(const StepState& st) const;
  SideTimes modeled_side_times(const StepState& st, const Traffic& step,
                               const OverlapStructure& o) const;
};

}  // namespace hb::hybrid
