// infinigen (InfiniGen, OSDI'24): all KV in host memory; a partial key (20% of the head
// dimensions, in a skewed basis from a one-time SVD of the prompt queries) stays on the
// accelerator. Each step the partial query scores every token, the tokens whose speculated
// logit is within alpha (4) of the best are counted, k = the mean count over batch x heads
// capped at 20% of the context, each KV head's top-k tokens are fetched from host memory
// (only those K and V rows cross the link) and attended exactly with the new token.
// Single-layer caveat: the original speculates layer i+1 from layer i's input while layer i
// runs; one layer has no previous layer, so the speculation uses this step's own query and
// nothing overlaps the fetch. The fetch buffers are sized to the accelerator budget: when the
// cap on k does not fit next to the partial keys it is lowered to what does, with a warning
// (infinigen.fit_fetch=0: oom instead). See baselines/README.md.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <numeric>

#include "baselines/common.h"
#include "baselines/kv_strategy_base.h"
#include "baselines/register.h"
#include "core/kv_set.h"
#include "core/phase_names.h"
#include "core/step_io.h"
#include "core/thread_pool.h"
#include "core/timer.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/linalg.h"
#include "kernels/cpu/page_pack.h"
#include "kernels/cpu/policy_ops.h"
#include "kernels/cpu/select.h"
#include "kernels/cpu/token_select.h"

namespace hb {
namespace {

using namespace baselines;

class InfiniGen final : public baselines::KvStrategyBase {
 public:
  explicit InfiniGen(const StrategyOptions& o) : KvStrategyBase("infinigen", o) {
    require_options(partial_ratio_ > 0 && partial_ratio_ <= 1 && max_ratio_ > 0 &&
                        max_ratio_ <= 1 && alpha_ >= 0 && (skew_ == 0 || skew_ == 1) &&
                        (fit_fetch_ == 0 || fit_fetch_ == 1),
                    "infinigen.partial_ratio and infinigen.max_ratio must be in (0, 1], alpha >= "
                    "0, skew and fit_fetch 0 or 1",
                    "e.g. --opt infinigen.partial_ratio=0.2 --opt infinigen.alpha=4");
  }

  void plan_into(const Problem& problem, const Platform& platform, PlanResult& r) override {
    const auto& shape = problem.shape;
    const int d = shape.head_dim, P = problem.page_tokens;
    pd_ = std::clamp(static_cast<int>(std::ceil(partial_ratio_ * d - 1e-9)), 1, d);
    pd_pad_ = (pd_ + 15) / 16 * 16;  // zero-padded for the SIMD scoring kernel
    max_tokens_ = full_context();
    max_pages_ = pages_for(max_tokens_, P);
    kmax_ = std::max<int64_t>(
        1, static_cast<int64_t>(std::llround(max_ratio_ * static_cast<double>(max_tokens_))));
    if (!budget_alone(problem, max_ratio_given_, "infinigen.max_ratio", r)) return;
    // run --kv-budget: the cap on k is the budget less the new token, at every step.
    budget_cap_ = problem.kv_budget_tokens > 0;
    if (budget_cap_) kmax_ = std::max<int64_t>(1, problem.kv_budget_tokens - 1);
    es_ = dtype_size(shape.kv_dtype);
    block_ = static_cast<size_t>(P) * d * es_;
    pblock_ = static_cast<size_t>(P) * pd_pad_ * es_;
    r.parameters["partial_dims"] = std::to_string(pd_);
    r.parameters["partial_dims_stored"] = std::to_string(pd_pad_);
    r.parameters["partial_ratio"] = num(partial_ratio_);
    r.parameters["alpha"] = num(alpha_);
    r.parameters["max_ratio"] = num(max_ratio_);
    // InfiniGen's offline analysis reads prompt queries; without them (a trace without prompt_q)
    // the prompt keys stand in (analyse()).
    const bool queries = problem.workloads[0].num_prompt_queries() > 0;
    const std::string rows = queries ? "prompt queries" : "prompt keys (no prompt queries)";
    r.parameters["skew"] = skew_ == 1 ? "svd of " + rows + " per KV head" : "none (raw dims)";
    r.parameters["partial_columns_from"] = rows;
    if (!queries)
      r.warnings.push_back(
          "infinigen: no prompt queries for its offline skew and partial-weight choice, so both "
          "come from the prompt keys (capture prompt_q, e.g. with scripts/capture-trace.py, for "
          "InfiniGen's own analysis)");
    r.parameters["selection"] = "per KV head, speculated logit = max over its query heads";
    r.parameters["speculation_input"] =
        "this step's query (single layer; original: previous layer's input)";
    r.parameters["kv_tier"] = platform.host_tiers.at(0).location.to_string();
    if (!check_host_kv_fit(platform, r) || !fit_fetch_cap(platform, r)) return;
    att_pages_ = pages_for(kmax_ + 1, P);
    if (budget_cap_)
      r.parameters["kv_budget_mapping"] =
          "k <= " + std::to_string(kmax_) +
          " fetched tokens + the new token = " + std::to_string(kmax_ + 1) +
          " (a cap: the realised k, the mean count within alpha of the best speculated logit, "
          "may be lower; attended_tokens reports it)";
  }

  void load() override {
    Accelerator& acc = *platform_.accelerator;
    auto mem = acc.memory();
    const auto& shape = problem_->shape;
    const int B = problem_->batch, Hq = shape.q_heads, Hkv = shape.kv_heads, d = shape.head_dim;
    const int P = problem_->page_tokens;
    const HostTier& tier = platform_.host_tiers.at(0);
    load_whole_prompt(tier.allocator);  // max_tokens_: the full context

    const size_t BH = static_cast<size_t>(B) * Hkv;
    proj_ = mem->allocate(BH * d * pd_pad_ * 4);
    pk_ = mem->allocate(BH * max_pages_ * pblock_);
    pq_ = mem->allocate(static_cast<size_t>(B) * Hq * pd_pad_ * 4);
    logits_ = mem->allocate(static_cast<size_t>(B) * Hq * max_tokens_ * 4);
    agg_ = mem->allocate(BH * max_tokens_ * 4);
    sel_ = mem->allocate(BH * kmax_ * 4);
    counts_ = mem->allocate(BH * 4);
    pknew_ = mem->allocate(BH * pd_pad_ * 4);
    rows_ = mem->allocate(2 * BH * kmax_ * d * es_);
    att_ = mem->allocate(BH * att_pages_ * 2 * block_);
    stage_ = acc.staging_memory(tier.location.node)->allocate(2 * BH * kmax_ * d * es_);
    sel_host_.assign(BH * kmax_, 0);
    counts_host_.assign(BH, 0);

    // One-time analysis per sequence and KV head: the skewing rotation and the partial dims.
    std::vector<float> proj(BH * d * pd_pad_, 0.0f);
    for (int b = 0; b < B; ++b)
      for (int h = 0; h < Hkv; ++h)
        analyse(problem_->workloads[b], h,
                proj.data() + (static_cast<size_t>(b) * Hkv + h) * d * pd_pad_);
    // The prompt's partial keys (in the skewed basis), page-blocked like any key cache.
    const int64_t n = problem_->prompt_len();
    std::vector<std::byte> pk(pk_.size(), std::byte{0});
    platform_.host_pool->parallel_for(static_cast<int64_t>(BH), [&](int64_t bh, int) {
      const int b = static_cast<int>(bh / Hkv), h = static_cast<int>(bh % Hkv);
      const DenseKv& prompt = problem_->workloads[b].prompt;
      std::vector<float> row(pd_pad_);
      for (int64_t t = 0; t < n; ++t) {
        ProjectRowsArgs pa;  // what project_rows does on the accelerator each step
        pa.x = prompt.k_row(t, h);
        pa.rows = 1;
        pa.dim = d;
        pa.cols = pd_;
        pa.out_width = pd_pad_;
        pa.proj = proj.data() + bh * d * pd_pad_;
        pa.out = row.data();
        cpu::project_rows(pa);
        cpu::write_row_to_pages(row.data(), nullptr, t, pd_pad_, P, shape.kv_dtype,
                                pk.data() + bh * max_pages_ * pblock_, nullptr);
      }
    });
    acc.copy_to_device(proj_.data(), proj.data(), proj_.size());
    acc.copy_to_device(pk_.data(), pk.data(), pk_.size());
    acc.synchronize();
    // Page tables of the partial keys and of the attention landing pages (fixed addresses).
    pk_table_.resize(BH * max_pages_);
    att_table_.resize(BH * att_pages_);
    for (size_t bh = 0; bh < BH; ++bh) {
      for (int64_t j = 0; j < max_pages_; ++j)
        pk_table_[bh * max_pages_ + j] =
            PageRef{pk_.as<std::byte>() + (bh * max_pages_ + j) * pblock_, nullptr};
      std::byte* base = att_.as<std::byte>() + bh * att_pages_ * 2 * block_;
      for (int64_t j = 0; j < att_pages_; ++j)
        att_table_[bh * att_pages_ + j] =
            PageRef{base + j * block_, base + (att_pages_ + j) * block_};
    }
    make_step_io();
  }

  std::vector<MemoryRegion> memory_regions() const override {
    auto r = kv_->regions();
    r.push_back({pk_.data(), pk_.size(), pk_.location(), "partial-K"});
    return r;
  }

  void step(int s, StepResult& out) override {
    const int64_t ctx = problem_->context_at(s), n_old = ctx - 1;
    const int64_t t0 = now_ns();
    // The new token's k, v go to the host cache; speculation runs meanwhile on the accelerator.
    copy_new_token_to_host();
    speculate(n_old);
    const int64_t k = select_tokens(ctx);
    const int64_t t1 = now_ns();
    out.phase_ns[phase::kSelect] = t1 - t0;
    gather_selected_rows(k);
    const int64_t t2 = now_ns();
    out.phase_ns[phase::kCpu] = t2 - t1;
    attend_selected_rows(k);
    collect_output(out);
    out.phase_ns[phase::kAccelerator] = now_ns() - t2;
    set_attended(out, [&](int b, int kvh) {
      const size_t bh = static_cast<size_t>(b) * problem_->shape.kv_heads + kvh;
      std::vector<int64_t> v(sel_host_.begin() + bh * k, sel_host_.begin() + (bh + 1) * k);
      v.push_back(ctx - 1);
      return v;
    });
    count_traffic(n_old, k, out.traffic);
  }

 private:
  // Bytes of one (sequence, KV head)'s selected K or V rows, and of all of them.
  size_t row_bytes() const { return static_cast<size_t>(problem_->shape.head_dim) * es_; }
  size_t moved_bytes(int64_t k) const {
    return 2 * static_cast<size_t>(problem_->batch) * problem_->shape.kv_heads * k * row_bytes();
  }

  // Enqueues the speculation: 1. the partial query of every query head and the new token's
  // partial key (skewed basis), 2. the speculated logits over every older token (logits_).
  void speculate(int64_t n_old) {
    Accelerator& acc = *platform_.accelerator;
    const auto& shape = problem_->shape;
    const int B = problem_->batch, Hq = shape.q_heads, Hkv = shape.kv_heads, d = shape.head_dim;
    const int P = problem_->page_tokens;
    const size_t BH = static_cast<size_t>(B) * Hkv;
    ProjectRowsArgs pa;
    pa.x_stride = d;
    pa.dim = d;
    pa.cols = pd_;
    pa.out_width = pd_pad_;
    pa.proj = proj_.as<float>();
    pa.x = io_->q_dev();  // query head qh of sequence b uses its KV head's basis
    pa.rows = B * Hq;
    pa.rows_per_proj = shape.group_size();
    pa.out = pq_.as<float>();
    acc.enqueue(pa);
    pa.x = io_->k_dev();  // the new key, one row per (sequence, KV head)
    pa.rows = static_cast<int>(BH);
    pa.rows_per_proj = 1;
    pa.out = pknew_.as<float>();
    acc.enqueue(pa);
    RowsToPagesArgs w;  // the new partial key into slot n_old of its head's pages
    w.groups = static_cast<int>(BH);
    w.width = pd_pad_;
    w.page_tokens = P;
    w.count = 1;
    w.first_slot = n_old;
    w.dtype = shape.kv_dtype;
    w.k_src = pknew_.data();
    w.src_stride = static_cast<size_t>(pd_pad_) * 4;
    w.k_dst = pk_.as<std::byte>();
    w.dst_stride = static_cast<size_t>(max_pages_) * pblock_;
    acc.enqueue(w);
    std::vector<KvHeadView> pk_heads(BH);
    for (size_t bh = 0; bh < BH; ++bh)
      pk_heads[bh] = KvHeadView{pk_table_.data() + bh * max_pages_, n_old};
    for (int b = 0; b < B; ++b) {
      const PagedKvView v{Hkv, pd_pad_, P, shape.kv_dtype,
                          pk_heads.data() + static_cast<size_t>(b) * Hkv};
      acc.score_logits(pq_.as<float>() + static_cast<size_t>(b) * Hq * pd_pad_, Hq, v, 0, n_old,
                       shape.softmax_scale(),
                       logits_.as<float>() + static_cast<size_t>(b) * Hq * max_tokens_,
                       max_tokens_);
    }
  }

  // 3. Selection on the accelerator: per KV head the max over its query heads' speculated
  // logits and the count within alpha of the best; the host reads the counts back and sets
  // k = the mean over batch x heads (capped), then each KV head's top-k positions, ascending,
  // come back into sel_host_ while the host stores the new token. Returns k.
  int64_t select_tokens(int64_t ctx) {
    Accelerator& acc = *platform_.accelerator;
    const auto& shape = problem_->shape;
    const int B = problem_->batch, Hq = shape.q_heads, Hkv = shape.kv_heads;
    const int64_t n_old = ctx - 1;
    const size_t BH = static_cast<size_t>(B) * Hkv;
    const int64_t kcap =
        budget_cap_ ? kmax_
                    : std::clamp<int64_t>(
                          static_cast<int64_t>(std::llround(max_ratio_ * static_cast<double>(ctx))),
                          1, kmax_);
    acc.enqueue(GroupMaxArgs{logits_.as<float>(), B * Hq, shape.group_size(), n_old, max_tokens_,
                             agg_.as<float>(), max_tokens_, static_cast<float>(alpha_),
                             counts_.as<int32_t>()});
    acc.copy_to_host(counts_host_.data(), counts_.data(), BH * 4);
    acc.synchronize();
    double total = 0;
    for (int32_t c : counts_host_) total += c;
    // int(mean) as the original, at least one token, capped.
    const int64_t k =
        n_old == 0 ? 0
                   : std::clamp<int64_t>(static_cast<int64_t>(total / static_cast<double>(BH)), 1,
                                         std::min(kcap, n_old));
    if (k > 0) {
      acc.enqueue(TopkRowsArgs{agg_.as<float>(), static_cast<int>(BH), n_old, max_tokens_, k,
                               sel_.as<int32_t>()});
      acc.copy_to_host(sel_host_.data(), sel_.data(), BH * k * 4);
    }
    // The host stores the new token while the indices come back.
    append_new_token_from_host_rows();
    acc.synchronize();
    return k;
  }

  // 4. Host: gather exactly the selected K and V rows into pinned staging.
  void gather_selected_rows(int64_t k) {
    const int B = problem_->batch, Hkv = problem_->shape.kv_heads;
    const size_t BH = static_cast<size_t>(B) * Hkv, rb = row_bytes();
    std::byte* stage_k = stage_.as<std::byte>();
    std::byte* stage_v = stage_k + BH * k * rb;
    for (int b = 0; b < B; ++b) {
      const PagedKvView v = kv_->cache(b).view();
      for (int h = 0; h < Hkv; ++h) {
        const size_t bh = static_cast<size_t>(b) * Hkv + h;
        cpu::gather_rows(v, h, sel_host_.data() + bh * k, k, stage_v + bh * k * rb,
                         stage_k + bh * k * rb);
      }
    }
  }

  // 5. Only those rows cross the link; the accelerator pages them with the new token and
  //    attends exactly (enqueued).
  void attend_selected_rows(int64_t k) {
    Accelerator& acc = *platform_.accelerator;
    const auto& shape = problem_->shape;
    const int B = problem_->batch, Hkv = shape.kv_heads, d = shape.head_dim;
    const int P = problem_->page_tokens;
    const size_t BH = static_cast<size_t>(B) * Hkv, rb = row_bytes();
    acc.copy_to_device(rows_.data(), stage_.data(), moved_bytes(k));
    RowsToPagesArgs w;  // the fetched rows, then the new token after them
    w.groups = static_cast<int>(BH);
    w.width = d;
    w.page_tokens = P;
    w.dtype = shape.kv_dtype;
    w.k_dst = att_.as<std::byte>();
    w.v_dst = att_.as<std::byte>() + att_pages_ * block_;
    w.dst_stride = static_cast<size_t>(att_pages_) * 2 * block_;
    w.count = k;
    w.src_f32 = false;
    w.zero_tail = true;
    w.k_src = rows_.data();
    w.v_src = rows_.as<std::byte>() + BH * k * rb;
    w.src_stride = k * rb;
    acc.enqueue(w);
    w.count = 1;
    w.first_slot = k;
    w.src_f32 = true;
    w.zero_tail = false;
    w.k_src = io_->k_dev();
    w.v_src = io_->v_dev();
    w.src_stride = static_cast<size_t>(d) * 4;
    acc.enqueue(w);
    std::vector<KvHeadView> heads(BH);
    for (size_t bh = 0; bh < heads.size(); ++bh)
      heads[bh] = KvHeadView{att_table_.data() + bh * att_pages_, k + 1};
    auto args = baselines::batch_attention_args(*problem_, *io_, [&](int b) {
      return PagedKvView{Hkv, d, P, shape.kv_dtype, heads.data() + static_cast<size_t>(b) * Hkv};
    });
    acc.decode_attention(args.data(), B);
  }

  // The step's traffic: the new token down and stored, the speculation, the selected rows'
  // gather, copy and paging, exact attention over them.
  void count_traffic(int64_t n_old, int64_t k, Traffic& t) const {
    const auto& shape = problem_->shape;
    const int B = problem_->batch, Hq = shape.q_heads, Hkv = shape.kv_heads, d = shape.head_dim;
    const int P = problem_->page_tokens;
    const size_t moved = moved_bytes(k);
    const MemoryKind am = MemoryKind::accelerator, tier = platform_.host_tiers.at(0).location.kind;
    const int64_t BHi = static_cast<int64_t>(B) * Hkv;
    t.d2h_bytes = static_cast<int64_t>(2 * io_->kv_row_bytes()) + BHi * 4 + BHi * k * 4;
    t.h2d_bytes = static_cast<int64_t>(moved);
    t.write(Processor::cpu, tier, shape.kv_bytes_per_token() * B);  // new token stored
    t.read(Processor::cpu, tier, static_cast<int64_t>(moved));      // gather
    t.write(Processor::cpu, MemoryKind::local_dram, static_cast<int64_t>(moved));  // staging
    t.read(Processor::accelerator, am, BHi * d * pd_pad_ * 4);                     // projections
    t.write(Processor::accelerator, am,
            BHi * pd_pad_ * static_cast<int64_t>(es_));  // new partial key
    t.read(Processor::accelerator, am,
           BHi * n_old * pd_pad_ * static_cast<int64_t>(es_));  // partial keys
    t.write(Processor::accelerator, am,
            static_cast<int64_t>(B) * Hq * n_old * 4);  // speculated logits
    t.read(Processor::accelerator, am, static_cast<int64_t>(B) * Hq * n_old * 4);
    t.write(Processor::accelerator, am, static_cast<int64_t>(moved));  // landing rows
    t.read(Processor::accelerator, am, static_cast<int64_t>(moved));   // paging them
    t.write(Processor::accelerator, am,
            BHi * pages_for(k + 1, P) * 2 * static_cast<int64_t>(block_));
    t.read(Processor::accelerator, am, (k + 1) * shape.kv_bytes_per_token() * B);  // attention
    t.accelerator_flops = 2.0 * d * pd_pad_ * (static_cast<double>(Hq) + Hkv) * B +
                          2.0 * pd_pad_ * Hq * static_cast<double>(n_old) * B +
                          4.0 * Hq * d * static_cast<double>(k + 1) * B;
    // The top-k over the old tokens; the group max and the threshold count before it are the
    // read of the speculated logits counted above, not a selection (priced as one, they
    // doubled the selection's cost and over-priced the step by up to 65% at 64k).
    t.select(Processor::accelerator, 1.0 * BHi * n_old);
    // partial q, partial k, its paging, speculation, group max + count, top-k, two pagings,
    // attention
    t.kernel_launches = 9;
    t.syncs = 3;
  }

  // Accelerator bytes whatever k is: the projections, partial keys and queries, speculated
  // logits, per-KV-head scores, counts, new partial keys and the step's activations.
  int64_t fixed_bytes() const {
    const Problem& p = *problem_;
    const int64_t B = p.batch, Hq = p.shape.q_heads, Hkv = p.shape.kv_heads, d = p.shape.head_dim;
    return B * Hkv * d * pd_pad_ * 4 + B * Hkv * max_pages_ * static_cast<int64_t>(pblock_) +
           B * Hq * pd_pad_ * 4 + B * Hq * max_tokens_ * 4 + B * Hkv * max_tokens_ * 4 +
           B * Hkv * (4 + pd_pad_ * 4) + step_io_bytes(p);
  }
  // Accelerator bytes for a cap of k fetched tokens per KV head: the selection, the landing rows
  // and the attention pages (the k rows and the new token).
  int64_t fetch_bytes(int64_t k) const {
    const int64_t BH = static_cast<int64_t>(problem_->batch) * problem_->shape.kv_heads;
    return BH * k * 4 + 2 * BH * k * static_cast<int64_t>(row_bytes()) +
           BH * pages_for(k + 1, problem_->page_tokens) * 2 * static_cast<int64_t>(block_);
  }

  // The largest cap k in [1, kmax_] whose fetch buffers fit `room` bytes (1 when none does).
  int64_t largest_fitting_cap(int64_t room) const {
    int64_t lo = 1, hi = kmax_;
    while (lo < hi) {
      const int64_t mid = hi - (hi - lo) / 2;
      if (fetch_bytes(mid) <= room)
        lo = mid;
      else
        hi = mid - 1;
    }
    return lo;
  }

  // InfiniGen's deployment keeps the KV cache in host memory and, on the accelerator, the
  // partial keys and the fetched tokens' landing buffers, sized by the cap on k. When that cap
  // does not fit, it is lowered to the largest that does (warning: only a step whose count
  // within alpha exceeds it fetches fewer tokens than the original would), unless
  // infinigen.fit_fetch=0; oom only when not even one fetched token fits.
  bool fit_fetch_cap(const Platform& platform, PlanResult& r) {
    const int64_t cap = accelerator_free(platform), fixed = fixed_bytes();
    record_deployment(r, true,
                      "InfiniGen's own: KV in host memory, partial keys and fetch buffers on the "
                      "accelerator (" +
                          mib(fixed + fetch_bytes(kmax_)) + " at a cap of " +
                          std::to_string(kmax_) + " tokens, budget " + mib(cap) + ")");
    if (fit_fetch_ == 1 && fixed + fetch_bytes(kmax_) > cap) {
      const int64_t k_fit = largest_fitting_cap(fillable_bytes(platform, fixed));
      if (fixed + fetch_bytes(k_fit) <= cap) {
        r.warnings.push_back("infinigen: the fetch buffers for " + std::to_string(kmax_) +
                             " tokens per head do not fit the accelerator next to the partial "
                             "keys; the cap on k is lowered to " +
                             std::to_string(k_fit) + " (raise --accelerator-memory)");
        r.parameters["fetch_cap"] = std::to_string(k_fit) + " (lowered from " +
                                    std::to_string(kmax_) + " to fit the accelerator budget)";
      }
      kmax_ = k_fit;  // if even that does not fit, the oom below names the smallest plan
    }
    return check_accelerator_fit(
        platform, fixed + fetch_bytes(kmax_),
        "partial keys (" + std::to_string(pd_) + " dims) and " + std::to_string(kmax_) +
            " fetched tokens per head",
        fit_fetch_ == 1 ? "lower infinigen.partial_ratio"
                        : "infinigen.fit_fetch=1 lowers the cap on fetched tokens to what fits",
        r);
  }

  // InfiniGen's offline skewing and prefill column choice, for one KV head of one sequence:
  // A = right singular vectors of the prompt queries of the head's query heads (the
  // eigenvectors of Q^T Q), then the pd columns of the skewed queries Q A with the largest
  // sum |.|. proj [d][pd_pad] = those columns of A (zero padded).
  void analyse(const Workload& w, int h, float* proj) const {
    const auto& shape = problem_->shape;
    const int d = shape.head_dim, G = shape.group_size(), Hq = shape.q_heads;
    const int64_t nq = w.num_prompt_queries();
    std::vector<double> rows;  // samples x d
    for (int64_t i = 0; i < nq; ++i)
      for (int g = 0; g < G; ++g) {
        const float* q = w.prompt_queries.data() + (static_cast<size_t>(i) * Hq + h * G + g) * d;
        rows.insert(rows.end(), q, q + d);
      }
    if (rows.empty())  // no prompt queries: fall back to the prompt keys' energy
      for (int64_t t = 0; t < w.prompt_len(); ++t)
        rows.insert(rows.end(), w.prompt.k_row(t, h), w.prompt.k_row(t, h) + d);
    const int64_t m = static_cast<int64_t>(rows.size()) / d;
    std::vector<double> basis(static_cast<size_t>(d) * d, 0.0);
    if (skew_ == 1 && m > 0) {
      std::vector<double> gram(static_cast<size_t>(d) * d, 0.0), values;
      for (int64_t r = 0; r < m; ++r) {
        const double* x = rows.data() + r * d;
        for (int i = 0; i < d; ++i)
          for (int j = i; j < d; ++j) gram[static_cast<size_t>(i) * d + j] += x[i] * x[j];
      }
      for (int i = 0; i < d; ++i)
        for (int j = 0; j < i; ++j)
          gram[static_cast<size_t>(i) * d + j] = gram[static_cast<size_t>(j) * d + i];
      cpu::symmetric_eigen(d, gram, values, basis);
    } else {
      for (int i = 0; i < d; ++i) basis[static_cast<size_t>(i) * d + i] = 1.0;
    }
    std::vector<double> energy(d, 0.0);
    for (int64_t r = 0; r < m; ++r) {
      const double* x = rows.data() + r * d;
      for (int c = 0; c < d; ++c) {
        double s = 0;
        for (int i = 0; i < d; ++i) s += x[i] * basis[static_cast<size_t>(i) * d + c];
        energy[c] += std::fabs(s);
      }
    }
    std::vector<int> cols(d);
    std::iota(cols.begin(), cols.end(), 0);
    std::stable_sort(cols.begin(), cols.end(), [&](int a, int b) { return energy[a] > energy[b]; });
    for (int i = 0; i < d; ++i)
      for (int c = 0; c < pd_pad_; ++c)
        proj[static_cast<size_t>(i) * pd_pad_ + c] =
            c < pd_ ? static_cast<float>(basis[static_cast<size_t>(i) * d + cols[c]]) : 0.0f;
  }

  const double partial_ratio_ = option("partial_ratio", 0.2);
  const double alpha_ = option("alpha", 4.0);
  const double max_ratio_ = option("max_ratio", 0.2);
  const bool max_ratio_given_ = option_given("max_ratio");
  const double fit_fetch_ = option("fit_fetch", 1);
  bool budget_cap_ = false;  // run --kv-budget: kmax_ is the cap at every step
  const double skew_ = option("skew", 1);
  int pd_ = 0, pd_pad_ = 0;
  int64_t max_tokens_ = 0, max_pages_ = 0, kmax_ = 0, att_pages_ = 0;
  size_t es_ = 2, block_ = 0, pblock_ = 0;
  // Accelerator memory: projections [b][kv][d][pd_pad] fp32, partial keys (page-blocked),
  // partial queries, speculated logits, per-KV-head scores, selection, counts within alpha,
  // the new partial keys, landing rows, attention pages.
  Buffer proj_, pk_, pq_, logits_, agg_, sel_, counts_, pknew_, rows_, att_;
  Buffer stage_;  // pinned host staging of the gathered rows
  std::vector<PageRef> pk_table_, att_table_;
  std::vector<int32_t> sel_host_, counts_host_;
};

}  // namespace

std::unique_ptr<Strategy> make_infinigen(const StrategyOptions& options) {
  return baselines::make_strategy<InfiniGen>(options);
}

}  // namespace hb
