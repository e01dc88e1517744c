// quest (Quest, ICML'24): pages of page_tokens (16) tokens with per-page elementwise min and
// max keys on the accelerator. Each step the query scores every page with the bound
// U = sum_i max(q_i * max_i, q_i * min_i), the top pages within the token budget (2048,
// always including the current page) are attended exactly. Each query head selects its own
// pages, as each head does in the original (MHA); under GQA the offloaded setting moves a KV
// head's union of its query heads' pages once, and attention reads each query head's. Resident
// setting (the original): all KV on the accelerator, selection saves only accelerator reads.
// Offloaded setting (quest.offload=1, and by default when all-resident does not fit): pages live
// in host memory and only the selected pages cross the link each step, into landing pages sized
// to the accelerator budget. See baselines/README.md.
#include <algorithm>
#include <cstring>
#include <map>
#include <memory>

#include "baselines/common.h"
#include "baselines/kv_strategy_base.h"
#include "baselines/register.h"
#include "core/kv_set.h"
#include "core/phase_names.h"
#include "core/step_io.h"
#include "core/thread_pool.h"
#include "core/timer.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/page_meta.h"
#include "kernels/cpu/select.h"
#include "kernels/cpu/token_select.h"

namespace hb {
namespace {

using namespace baselines;

class Quest final : public baselines::KvStrategyBase {
 public:
  // quest.budget and quest.min_pages are checked as they are read (count_option: >= 1).
  explicit Quest(const StrategyOptions& o) : KvStrategyBase("quest", o) {}

  // Quest's token budget, then the deployment: all-resident (the original) when it fits or
  // quest.offload=0, else the offloaded setting with landing pages sized to what is left.
  void plan_into(const Problem& problem, const Platform& platform, PlanResult& r) override {
    if (!budget_alone(problem, budget_given_, "quest.budget", r)) return;
    plan_budget(problem, r);
    const int64_t max_tokens = full_context();
    max_pages_ = pages_for(max_tokens, problem.page_tokens);
    block_ = static_cast<size_t>(problem.page_tokens) * problem.shape.head_dim *
             dtype_size(problem.shape.kv_dtype);
    meta_blocks_ = pages_for(max_pages_, kMetaSlots);
    const int64_t base = metadata_bytes() + step_io_bytes(problem);
    const int64_t resident = base + kv_bytes(platform.accelerator->memory(), max_tokens);
    offload_ = choose_offload(offload_opt_, resident, "offload", platform, r);
    if (!offload_) {
      if (!check_accelerator_fit(platform, resident, "all KV plus page metadata",
                                 "quest.offload=auto or 1 keeps KV in host memory", r))
        return;
    } else if (!check_host_kv_fit(platform, r) || !plan_landing(platform, base, r)) {
      return;
    }
    write_parameters(problem, platform, r);
  }

 private:
  // Quest's controller: max(min_pages, budget / page) pages, the current page included.
  void plan_budget(const Problem& problem, PlanResult& r) {
    const int P = problem.page_tokens;
    const int64_t budget = problem.kv_budget_tokens > 0 ? problem.kv_budget_tokens : budget_opt_;
    budget_pages_ = std::max<int64_t>(min_pages_opt_, budget / P);
    if (problem.kv_budget_tokens > 0)
      r.parameters["kv_budget_mapping"] =
          std::to_string(budget) +
          " tokens -> max(min_pages, budget / page) = " + std::to_string(budget_pages_) +
          " pages of " + std::to_string(P) +
          " (the current page included: a partly filled one attends fewer)";
  }

  // Accelerator bytes both settings need besides the KV: the page bounds (center and radius
  // planes), the current boxes, |q|, the page scores and the selection.
  int64_t metadata_bytes() const {
    const auto& shape = problem_->shape;
    const int64_t B = problem_->batch, Hkv = shape.kv_heads;
    const int64_t meta = 2 * B * Hkv * meta_blocks_ * kMetaSlots * shape.head_dim *
                         static_cast<int64_t>(dtype_size(shape.kv_dtype));
    return meta + B * shape.q_heads * budget_pages_ * 4 + B * Hkv * 2 * shape.head_dim * 4 +
           B * shape.q_heads * (shape.head_dim + 2 * max_pages_) * 4;
  }

  // Offloaded setting: the landing pages hold one step's selected pages, each KV head's union
  // of its query heads' pages, at most. An offloading system sizes that buffer to its memory:
  // when fewer pages fit than the worst case, a step whose unions outgrow it lands and attends
  // them in rounds of query heads (exact, same selection), so Quest keeps its own budget. Only
  // when one query head's pages do not fit is the budget lowered (warning), and only when not
  // even min_pages fit is the point oom.
  bool plan_landing(const Platform& platform, int64_t base, PlanResult& r) {
    const int64_t page = 2 * static_cast<int64_t>(block_);
    const int64_t worst = problem_->batch * problem_->shape.kv_heads * union_pages_max();
    landing_pages_ = base + worst * page <= accelerator_free(platform)
                         ? worst
                         : fillable_bytes(platform, base) / page;
    // A round needs one query head's pages (never more than the context's).
    const int64_t min_pages = std::min(min_pages_opt_, max_pages_);
    if (landing_pages_ < min_pages)  // with the kernels' scratch (fillable_bytes): oom
      return check_accelerator_fit(platform,
                                   base + min_pages * page + accelerator_free(platform) / 16,
                                   "page metadata, " + std::to_string(min_pages) +
                                       " landing pages (quest.min_pages) and kernel scratch",
                                   "lower quest.min_pages or raise --accelerator-memory", r);
    if (landing_pages_ < std::min(budget_pages_, max_pages_)) {
      r.warnings.push_back("quest: " + std::to_string(budget_pages_) +
                           " pages per step do not fit the accelerator next to the page bounds; "
                           "lowered to " +
                           std::to_string(landing_pages_) + " (raise --accelerator-memory)");
      budget_pages_ = landing_pages_;
    }
    r.parameters["landing_pages"] =
        std::to_string(landing_pages_) + " of a worst case " + std::to_string(worst) +
        " (all KV heads' unions of their query heads' pages; a step needing more lands in "
        "rounds)";
    return true;
  }

  void write_parameters(const Problem& problem, const Platform& platform, PlanResult& r) const {
    r.parameters["page_tokens"] = std::to_string(problem.page_tokens);
    r.parameters["budget_tokens"] = std::to_string(budget_pages_ * problem.page_tokens);
    r.parameters["budget_pages"] = std::to_string(budget_pages_);
    r.parameters["offload"] = offload_ ? "1" : "0";
    r.parameters["gqa"] =
        "per query head (the original's per-head selection); reads and moves the union of a KV "
        "head's query heads' pages";
    r.parameters["metadata"] =
        "per-page key box as center/radius in " + std::string(dtype_name(problem.shape.kv_dtype));
    if (offload_) r.parameters["kv_tier"] = platform.host_tiers.at(0).location.to_string();
  }

 public:
  void load() override {
    Accelerator& acc = *platform_.accelerator;
    auto mem = acc.memory();
    const auto& shape = problem_->shape;
    const int B = problem_->batch, Hkv = shape.kv_heads;
    auto kv_alloc = offload_ ? platform_.host_tiers.at(0).allocator : mem;
    load_whole_prompt(kv_alloc);
    const int d = shape.head_dim, Hq = shape.q_heads;
    const size_t mblock = static_cast<size_t>(kMetaSlots) * d * dtype_size(shape.kv_dtype);
    const size_t BH = static_cast<size_t>(B) * Hkv, BQ = static_cast<size_t>(B) * Hq;
    mc_ = mem->allocate(BH * meta_blocks_ * mblock);
    mr_ = mem->allocate(BH * meta_blocks_ * mblock);
    box_ = mem->allocate(BH * 2 * d * 4);
    qabs_ = mem->allocate(static_cast<size_t>(B) * Hq * d * 4);
    bounds_ = mem->allocate(static_cast<size_t>(B) * 2 * Hq * max_pages_ * 4);
    sel_ = mem->allocate(BQ * budget_pages_ * 4);
    sel_host_.assign(BQ * budget_pages_, 0);
    sel_picked_.assign(BQ * budget_pages_, 0);
    mc_table_.resize(BH * meta_blocks_);
    mr_table_.resize(BH * meta_blocks_);
    for (size_t i = 0; i < BH * meta_blocks_; ++i) {
      mc_table_[i] = PageRef{mc_.as<std::byte>() + i * mblock, nullptr};
      mr_table_[i] = PageRef{mr_.as<std::byte>() + i * mblock, nullptr};
    }
    if (offload_) {
      landing_ = mem->allocate(static_cast<size_t>(landing_pages_) * 2 * block_);
      // Host staging holds every round's pages: each query head's at most once per round.
      stage_ = acc.staging_memory(platform_.host_tiers.at(0).location.node)
                   ->allocate(BQ * budget_pages_ * 2 * block_);
    }
    upload_prompt_bounds();
    make_step_io();
  }

  void step(int s, StepResult& out) override {
    const StepPages sp = step_pages(s);
    const int64_t t0 = now_ns();
    if (!offload_)
      kv_->append_step(s);  // produced on the accelerator: an accelerator-local append
    else
      copy_new_token_to_host();
    enqueue_selection(sp);
    count_selection_traffic(sp, out.traffic);
    if (!offload_)
      finish_resident(sp, out);
    else
      finish_offloaded(sp, t0, out);
    // Attended tokens: each query head's selected pages' tokens, by original position.
    const int Hq = problem_->shape.q_heads, P = problem_->page_tokens;
    out.attended.resize(static_cast<size_t>(problem_->batch) * Hq);
    for (size_t row = 0; row < out.attended.size(); ++row) {
      std::vector<int64_t>& v = out.attended[row];
      v.resize(static_cast<size_t>(sp.tokens));
      int64_t i = 0;
      for (int64_t j = 0; j < sp.kp; ++j) {
        const int64_t p = sel_host_[row * sp.kp + j];
        for (int64_t tk = p * P; tk < std::min(sp.ctx, (p + 1) * P); ++tk) v[i++] = tk;
      }
    }
  }

 private:
  // One step's page counts: ctx tokens in np pages (the current one, `last`, possibly partial),
  // kp of them attended (the current one included) holding `tokens` tokens.
  struct StepPages {
    int64_t ctx, np, last, kp, tokens;
    bool first_in_page;  // the new token opens the current page
  };
  StepPages step_pages(int s) const {
    const int P = problem_->page_tokens;
    StepPages sp;
    sp.ctx = problem_->context_at(s);
    sp.np = pages_for(sp.ctx, P);
    sp.last = sp.np - 1;
    sp.kp = std::min(sp.np, budget_pages_);
    sp.tokens = (sp.kp - 1) * P + (sp.ctx - sp.last * P);
    sp.first_in_page = (sp.ctx - 1) % P == 0;
    return sp;
  }

  // Enqueues the policy kernels: fold the new key into its page's bound; when the pages outgrow
  // the budget, bound every older page (U = q.c + |q|.r) and select per query head, as Quest
  // does per head, its top kp-1 older pages (ascending) into sel_, and copy them back. (A page
  // set shared by a KV head's query heads, scored by the max of their bounds, loses ~0.02 of
  // mass recall at 32k: baselines/README.md.) complete_selection() adds the current page.
  void enqueue_selection(const StepPages& sp) {
    Accelerator& acc = *platform_.accelerator;
    const auto& shape = problem_->shape;
    const int B = problem_->batch, Hq = shape.q_heads, Hkv = shape.kv_heads;
    const size_t BH = static_cast<size_t>(B) * Hkv;
    std::vector<std::byte*> cb(BH), rb(BH);
    for (size_t bh = 0; bh < BH; ++bh) {
      cb[bh] = mc_table_[bh * meta_blocks_ + sp.last / kMetaSlots].k;
      rb[bh] = mr_table_[bh * meta_blocks_ + sp.last / kMetaSlots].k;
    }
    PageBoundFoldArgs f;
    f.rows = static_cast<int>(BH);
    f.head_dim = shape.head_dim;
    f.dtype = shape.kv_dtype;
    f.keys = io_->k_dev();
    f.boxes = box_.as<float>();
    f.first = sp.first_in_page;
    f.c_blocks = cb.data();
    f.r_blocks = rb.data();
    f.block_slots = kMetaSlots;
    f.slot = static_cast<int>(sp.last % kMetaSlots);
    acc.enqueue(f);
    if (!selecting(sp)) return;  // every page fits the budget: dense
    std::vector<KvHeadView> ch(BH), rh(BH);
    std::vector<PagedKvView> cv(B), rv(B);
    for (size_t bh = 0; bh < BH; ++bh) {
      ch[bh] = KvHeadView{mc_table_.data() + bh * meta_blocks_, sp.last};
      rh[bh] = KvHeadView{mr_table_.data() + bh * meta_blocks_, sp.last};
    }
    for (int b = 0; b < B; ++b) {
      cv[b] = PagedKvView{Hkv, shape.head_dim, kMetaSlots, shape.kv_dtype, ch.data() + b * Hkv};
      rv[b] = PagedKvView{Hkv, shape.head_dim, kMetaSlots, shape.kv_dtype, rh.data() + b * Hkv};
    }
    float* scores = bounds_.as<float>();
    const size_t plane = static_cast<size_t>(B) * Hq * max_pages_;
    PageBoundScoreArgs bs;
    bs.batch = B;
    bs.q_heads = Hq;
    bs.q = io_->q_dev();
    bs.centers = cv.data();
    bs.radii = rv.data();
    bs.n_pages = sp.last;
    bs.scale = shape.softmax_scale();
    bs.scores = scores;
    bs.stride = max_pages_;
    bs.qabs = qabs_.as<float>();
    bs.radius_scores = scores + plane;
    acc.enqueue(bs);
    acc.enqueue(TopkRowsArgs{scores, B * Hq, sp.last, max_pages_, sp.kp - 1, sel_.as<int32_t>()});
    acc.copy_to_host(sel_picked_.data(), sel_.data(), selection_bytes(sp));
  }

  // More pages than the budget: the step selects (else every page is attended).
  bool selecting(const StepPages& sp) const { return sp.np > sp.kp; }
  size_t selection_bytes(const StepPages& sp) const {
    return selecting(sp)
               ? static_cast<size_t>(problem_->batch) * problem_->shape.q_heads * (sp.kp - 1) * 4
               : 0;
  }

  // Once the selection is back: each query head's kp pages, ascending, into sel_host_ (its
  // kp-1 picks and the current page; every page when they fit the budget).
  void complete_selection(const StepPages& sp) {
    const size_t rows = static_cast<size_t>(problem_->batch) * problem_->shape.q_heads;
    const int64_t kp = sp.kp;
    for (size_t row = 0; row < rows; ++row) {
      int32_t* out = sel_host_.data() + row * kp;
      if (!selecting(sp)) {
        for (int64_t j = 0; j < kp; ++j) out[j] = static_cast<int32_t>(j);
        continue;
      }
      std::copy_n(sel_picked_.data() + row * (kp - 1), kp - 1, out);
      out[kp - 1] = static_cast<int32_t>(sp.last);
    }
  }

  // Most pages a KV head's query heads select together (their union): the landing pages' worst
  // case per KV head.
  int64_t union_pages_max() const {
    return std::min(max_pages_, budget_pages_ * problem_->shape.group_size());
  }

  // Traffic both settings share: the page bounds scored, the current box updated, attention
  // flops over the selected pages (the KV it reads is counted once the selection is back).
  void count_selection_traffic(const StepPages& sp, Traffic& t) const {
    const auto& shape = problem_->shape;
    const int B = problem_->batch, Hq = shape.q_heads, Hkv = shape.kv_heads, d = shape.head_dim;
    const int64_t np = sp.np;
    const MemoryKind am = MemoryKind::accelerator;
    const int64_t meta_row = static_cast<int64_t>(d * dtype_size(shape.kv_dtype));
    if (np > budget_pages_) {
      t.read(Processor::accelerator, am,
             2 * (np - 1) * meta_row * Hkv * B);  // center + radius planes
      t.select(Processor::accelerator,
               static_cast<double>(np - 1) * Hq * B);  // top-k over each query head's scores
      t.accelerator_flops += 4.0 * d * Hq * (np - 1) * B;
    }
    t.read(Processor::accelerator, am,
           (sp.first_in_page ? 0 : 2 * d * 4) * Hkv * B);                       // current box
    t.write(Processor::accelerator, am, (2 * d * 4 + 2 * meta_row) * Hkv * B);  // box, its bound
    t.accelerator_flops += 4.0 * Hq * d * static_cast<double>(sp.tokens) * B;
  }

  // Attention's KV reads as the kernel requests them: every query head's own pages (one K and
  // one V row per token of one KV head: kv_bytes_per_token / kv_heads). The attention runs a
  // view of one head per query head (selected_pages), so a page two query heads picked is read
  // twice, the second time mostly from the caches (which the traffic cannot say; model README,
  // "Reuse inside a step"). Counting each KV head's union once would describe a GQA kernel
  // loading a page for the group: no kernel here does that.
  void count_attention_reads(const StepPages& sp, MemoryKind where, Traffic& t) const {
    const auto& shape = problem_->shape;
    t.read(Processor::accelerator, where,
           problem_->batch * shape.q_heads * sp.tokens *
               (shape.kv_bytes_per_token() / shape.kv_heads));
  }

  // Resident setting: once the selection is back, exact attention over each query head's pages
  // where they are (the host builds the page tables from the indices).
  void finish_resident(const StepPages& sp, StepResult& out) {
    Accelerator& acc = *platform_.accelerator;
    const int Hq = problem_->shape.q_heads;
    const int64_t select_ns = acc.synchronize();
    complete_selection(sp);
    std::vector<PagedKvView> views;
    for (int b = 0; b < problem_->batch; ++b) views.push_back(kv_->cache(b).view());
    SelectedPages pages = selected_pages(sp.kp, sp.tokens, [&](size_t row, int64_t j) {
      const int qh = static_cast<int>(row % Hq);
      return views[row / Hq]
          .heads[problem_->shape.kv_head_of(qh)]
          .pages[sel_host_[row * sp.kp + j]];
    });
    acc.decode_attention(pages.args.data(), problem_->batch);
    out.phase_ns[phase::kAccelerator] = select_ns + collect_output(out);
    Traffic& t = out.traffic;
    count_attention_reads(sp, MemoryKind::accelerator, t);
    t.write(Processor::accelerator, MemoryKind::accelerator,
            problem_->shape.kv_bytes_per_token() * problem_->batch);  // new token
    t.d2h_bytes = static_cast<int64_t>(selection_bytes(sp));
    t.kernel_launches = selecting(sp) ? 4 : 2;  // bound fold, [page bounds, top-k,] attention
    t.syncs = 2;
  }

  // Offloaded setting: once the selection is back, the host stores the new token and gathers
  // the selected pages (the current one included); only those cross the link, round by round
  // into the landing pages (one round unless the unions outgrow them), and each round's query
  // heads attend there. The queue is in order, so a round's copy waits for the last attention.
  void finish_offloaded(const StepPages& sp, int64_t t0, StepResult& out) {
    Accelerator& acc = *platform_.accelerator;
    const int64_t kp = sp.kp;
    acc.synchronize();
    const int64_t t1 = now_ns();
    out.phase_ns[phase::kSelect] = t1 - t0;
    complete_selection(sp);
    append_new_token_from_host_rows();
    std::vector<size_t> slot(sel_host_.size());
    const std::vector<LandingRound> rounds = gather_selected_pages(kp, slot);
    const int64_t t2 = now_ns();
    out.phase_ns[phase::kCpu] = t2 - t1;
    auto* land = landing_.as<std::byte>();
    SelectedPages pages = selected_pages(kp, sp.tokens, [&](size_t row, int64_t j) {
      const size_t i = slot[row * kp + j];
      return PageRef{land + (i * 2) * block_, land + (i * 2 + 1) * block_};
    });
    size_t moved = 0;
    for (const LandingRound& rd : rounds) {
      acc.copy_to_device(land, stage_.as<std::byte>() + rd.stage0 * 2 * block_,
                         rd.pages * 2 * block_);
      std::vector<DecodeAttentionArgs> args = row_range_args(pages.args, rd.row0, rd.row1);
      acc.decode_attention(args.data(), static_cast<int>(args.size()));
      moved += rd.pages * 2 * block_;
    }
    collect_output(out);
    out.phase_ns[phase::kAccelerator] = now_ns() - t2;
    count_offloaded_traffic(sp, moved, static_cast<int64_t>(rounds.size()), out.traffic);
  }

  void count_offloaded_traffic(const StepPages& sp, size_t moved, int64_t rounds,
                               Traffic& t) const {
    const int B = problem_->batch;
    const MemoryKind tier = platform_.host_tiers.at(0).location.kind;
    t.d2h_bytes = static_cast<int64_t>(2 * io_->kv_row_bytes() + selection_bytes(sp));
    t.h2d_bytes = static_cast<int64_t>(moved);
    t.write(Processor::cpu, tier, problem_->shape.kv_bytes_per_token() * B);       // new token
    t.read(Processor::cpu, tier, static_cast<int64_t>(moved));                     // gather
    t.write(Processor::cpu, MemoryKind::local_dram, static_cast<int64_t>(moved));  // staging
    t.write(Processor::accelerator, MemoryKind::accelerator,
            static_cast<int64_t>(moved));  // landing pages
    count_attention_reads(sp, MemoryKind::accelerator, t);
    // bound fold, [page bounds, top-k,] one attention per landing round
    t.kernel_launches = (selecting(sp) ? 3 : 1) + rounds;
    t.syncs = 2;
  }

  // One landing round: query-head rows [row0, row1) (row = b * q_heads + h) attend the `pages`
  // pages staged from page stage0 on, landed at the start of the landing pages.
  struct LandingRound {
    size_t row0 = 0, row1 = 0, stage0 = 0, pages = 0;
  };

  // Host: each (sequence, KV head)'s union of its query heads' selected pages into pinned
  // staging, packed, K then V per page (a page two query heads of a round picked crosses once).
  // A query head whose new pages would overflow the landing pages starts a new round. Sets, per
  // (query head row, j), the landing slot of its j-th page within its round.
  std::vector<LandingRound> gather_selected_pages(int64_t kp, std::vector<size_t>& slot) {
    const int Hq = problem_->shape.q_heads, G = problem_->shape.group_size();
    auto* stage = stage_.as<std::byte>();
    std::vector<LandingRound> rounds(1);
    size_t next = 0;  // pages staged so far
    const size_t rows = static_cast<size_t>(problem_->batch) * Hq;
    for (size_t g0 = 0; g0 < rows; g0 += G) {  // the first query-head row of a KV head
      const int b = static_cast<int>(g0 / Hq), h = static_cast<int>(g0 % Hq) / G;
      std::map<int32_t, size_t> at;  // page -> staged index, within the current round
      for (size_t row = g0; row < g0 + G; ++row) {
        const int32_t* pg = sel_host_.data() + row * kp;
        const auto fresh = std::count_if(pg, pg + kp, [&](int32_t p) { return !at.count(p); });
        if (rounds.back().pages + fresh > static_cast<size_t>(landing_pages_)) {
          rounds.push_back(LandingRound{row, row, next, 0});
          at.clear();
        }
        for (int64_t j = 0; j < kp; ++j) {
          auto [it, added] = at.emplace(pg[j], next);
          if (added) {
            const PageRef& src = kv_->cache(b).page(h, pg[j]);
            std::memcpy(stage + (next * 2) * block_, src.k, block_);
            std::memcpy(stage + (next * 2 + 1) * block_, src.v, block_);
            ++next;
            ++rounds.back().pages;
          }
          slot[row * kp + j] = it->second - rounds.back().stage0;
        }
        rounds.back().row1 = row + 1;
      }
    }
    return rounds;
  }

  // The attention arguments of query-head rows [row0, row1) only: each sequence's args (one
  // per sequence, a view of one head per query head) narrowed to its rows in the range.
  std::vector<DecodeAttentionArgs> row_range_args(const std::vector<DecodeAttentionArgs>& all,
                                                  size_t row0, size_t row1) const {
    const size_t Hq = static_cast<size_t>(problem_->shape.q_heads);
    const size_t d = static_cast<size_t>(problem_->shape.head_dim);
    std::vector<DecodeAttentionArgs> out;
    for (size_t b = row0 / Hq; b < all.size() && b * Hq < row1; ++b) {
      const size_t h0 = std::max(row0, b * Hq) - b * Hq, h1 = std::min(row1, (b + 1) * Hq) - b * Hq;
      DecodeAttentionArgs a = all[b];
      a.q += h0 * d;
      a.o += h0 * d;
      a.lse += h0;
      a.q_heads = static_cast<int>(h1 - h0);
      a.kv.kv_heads = a.q_heads;
      a.kv.heads += h0;
      out.push_back(a);
    }
    return out;
  }

  // Prefill: the bounds of every prompt page and the current page's exact box (new keys fold
  // into it), from the prompt's keys as the cache holds them (rounded through its dtype). Built
  // on the host and copied: load is not timed, and Quest computes them once after prefill.
  void upload_prompt_bounds() {
    const auto& shape = problem_->shape;
    const int Hkv = shape.kv_heads, d = shape.head_dim, P = problem_->page_tokens;
    const int64_t n = problem_->prompt_len();
    const size_t BH = static_cast<size_t>(problem_->batch) * Hkv;
    const size_t mblock = static_cast<size_t>(kMetaSlots) * d * dtype_size(shape.kv_dtype);
    std::vector<std::byte> c(mc_.size()), r(mr_.size());
    std::vector<float> box(box_.size() / 4, 0.0f);
    platform_.host_pool->parallel_for(static_cast<int64_t>(BH), [&](int64_t bh, int) {
      const DenseKv& prompt = problem_->workloads[bh / Hkv].prompt;
      const int h = static_cast<int>(bh % Hkv);
      float* lo = box.data() + bh * 2 * d;
      std::vector<float> key(d);
      for (int64_t t = 0; t < n; ++t) {
        std::copy_n(prompt.k_row(t, h), d, key.data());
        round_through(shape.kv_dtype, key.data(), key.size());
        cpu::page_box_add(key.data(), d, t % P == 0, lo, lo + d);
        if (t % P != P - 1 && t != n - 1) continue;  // the page's bound once it is complete
        const int64_t p = t / P;
        const size_t at = (bh * meta_blocks_ + p / kMetaSlots) * mblock;
        cpu::write_page_bound(lo, lo + d, d, kMetaSlots, shape.kv_dtype,
                              static_cast<int>(p % kMetaSlots), c.data() + at, r.data() + at);
      }
    });
    Accelerator& acc = *platform_.accelerator;
    acc.copy_to_device(mc_.data(), c.data(), c.size());
    acc.copy_to_device(mr_.data(), r.data(), r.size());
    acc.copy_to_device(box_.data(), box.data(), box_.size());
    acc.synchronize();
  }

  // Attention over kp pages per (sequence, query head) holding `tokens` tokens: page j of query
  // head row = b * q_heads + h is page_of(row, j). Each query head gets a view of its own (a
  // view of q_heads heads: group 1), so heads of one KV head attend different pages. The tables
  // must outlive the attention call.
  struct SelectedPages {
    std::vector<PageRef> table;
    std::vector<KvHeadView> heads;
    std::vector<DecodeAttentionArgs> args;
  };
  template <class PageOf>
  SelectedPages selected_pages(int64_t kp, int64_t tokens, PageOf&& page_of) {
    const auto& shape = problem_->shape;
    const size_t BQ = static_cast<size_t>(problem_->batch) * shape.q_heads;
    SelectedPages sp;
    sp.table.resize(BQ * static_cast<size_t>(kp));
    sp.heads.resize(BQ);
    for (size_t row = 0; row < BQ; ++row) {
      for (int64_t j = 0; j < kp; ++j) sp.table[row * kp + j] = page_of(row, j);
      sp.heads[row] = KvHeadView{sp.table.data() + row * kp, tokens};
    }
    sp.args = baselines::batch_attention_args(*problem_, *io_, [&](int b) {
      return PagedKvView{shape.q_heads, shape.head_dim, problem_->page_tokens, shape.kv_dtype,
                         sp.heads.data() + static_cast<size_t>(b) * shape.q_heads};
    });
    return sp;
  }

  const int64_t budget_opt_ = count_option("budget", 2048, 1);
  const bool budget_given_ = option_given("budget");
  const OffloadChoice offload_opt_ = offload_option("offload");
  const int64_t min_pages_opt_ = count_option("min_pages", 3, 1);
  bool offload_ = false;
  int64_t budget_pages_ = 0, max_pages_ = 0;
  size_t block_ = 0;
  static constexpr int kMetaSlots = 16;  // page bounds per metadata block
  int64_t meta_blocks_ = 0;
  // Accelerator memory: center and radius planes of the page bounds, the current page's exact
  // box per (sequence, KV head), |q|, per-query-head bounds (the page scores, then the radius
  // plane's pass: [2][batch][q_head][max_pages]), the selection per query head, landing pages
  // (offloaded setting: each KV head's union, packed).
  Buffer mc_, mr_, box_, qabs_, bounds_, sel_, landing_;
  int64_t landing_pages_ = 0;  // offloaded setting: pages the landing buffer holds
  std::vector<PageRef> mc_table_, mr_table_;
  Buffer stage_;                     // host staging for the offloaded setting
  std::vector<int32_t> sel_host_;    // [batch][q_head][kp] this step's pages, ascending
  std::vector<int32_t> sel_picked_;  // [batch][q_head][kp - 1] the selection as copied back
};

}  // namespace

std::unique_ptr<Strategy> make_quest(const StrategyOptions& options) {
  return baselines::make_strategy<Quest>(options);
}

}  // namespace hb
