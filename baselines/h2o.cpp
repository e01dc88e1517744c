// h2o (Heavy-Hitter Oracle, NeurIPS'23): the accelerator keeps a budget of heavy hitters
// (10% of the context) plus the most recent tokens (10%). Every token carries a score, the
// softmax probability it has received so far, per KV head summed over the query heads that
// share it; prefill seeds it from the prompt queries the workload provides. Each step the
// new token takes the slot freed by the previous step's eviction, attention emits its logits,
// a policy kernel adds exp(logit - lse) to the scores and picks the lowest-scoring token
// outside the recent window as the next victim. Evicted tokens are gone. When the kept tokens
// and their scores do not fit the accelerator (h2o.offload=auto), they live in host memory and
// the CPU attends and scores them: the offloaded deployment of H2O's own FlexGen port (its
// cpu_cache_compute path), the same tokens and so the same accuracy. See README.md.
#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>

#include "baselines/common.h"
#include "baselines/kv_strategy_base.h"
#include "baselines/register.h"
#include "core/error.h"
#include "core/kv_set.h"
#include "core/phase_names.h"
#include "core/step_io.h"
#include "core/timer.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/policy_ops.h"
#include "kernels/cpu/select.h"
#include "kernels/cpu/token_select.h"

namespace hb {
namespace {

using namespace baselines;

class H2o final : public baselines::KvStrategyBase {
 public:
  explicit H2o(const StrategyOptions& o) : KvStrategyBase("h2o", o) {
    require_options(heavy_ratio_ >= 0 && recent_ratio_ >= 0 && heavy_ratio_ + recent_ratio_ <= 1,
                    "h2o.heavy_ratio and h2o.recent_ratio must be >= 0 and sum to at most 1",
                    "e.g. --opt h2o.heavy_ratio=0.1 --opt h2o.recent_ratio=0.1");
  }

  void plan_into(const Problem& problem, const Platform& platform, PlanResult& r) override {
    const int64_t n = problem.prompt_len();
    heavy_ = heavy_opt_ >= 0 ? heavy_opt_ : ratio_tokens(heavy_ratio_, n);
    recent_ = recent_opt_ >= 0 ? recent_opt_ : ratio_tokens(recent_ratio_, n);
    if (!budget_alone(problem, heavy_opt_ >= 0 || recent_opt_ >= 0, "h2o.heavy/recent", r)) return;
    if (const int64_t budget = problem.kv_budget_tokens; budget > 0) {
      // run --kv-budget: heavy + recent + the incoming token = the budget, split heavy:recent as
      // heavy_ratio:recent_ratio (the paper's equal halves by default).
      const int64_t cached = budget - 1;
      const double share =
          heavy_ratio_ + recent_ratio_ > 0 ? heavy_ratio_ / (heavy_ratio_ + recent_ratio_) : 0.5;
      heavy_ = std::llround(share * static_cast<double>(cached));
      recent_ = cached - heavy_;
      r.parameters["kv_budget_mapping"] = "heavy " + std::to_string(heavy_) + " + recent " +
                                          std::to_string(recent_) +
                                          " + the new token = " + std::to_string(budget) +
                                          " (heavy:recent as heavy_ratio:recent_ratio)";
    }
    cap_ = heavy_ + recent_ + 1;  // the budget plus the incoming token, evicted back to budget
    r.parameters["heavy_tokens"] = std::to_string(heavy_);
    r.parameters["recent_tokens"] = std::to_string(recent_);
    r.parameters["heavy_ratio"] = heavy_opt_ >= 0 ? "-" : num(heavy_ratio_);
    r.parameters["recent_ratio"] = recent_opt_ >= 0 ? "-" : num(recent_ratio_);
    r.parameters["budget_tokens"] = std::to_string(heavy_ + recent_ + 1);  // + the new token
    const int64_t prefill_queries = problem.workloads[0].num_prompt_queries();
    r.parameters["prefill_queries"] = std::to_string(prefill_queries);
    if (prefill_queries > 0) {
      r.parameters["prefill_scores"] = "softmax probabilities the last " +
                                       std::to_string(prefill_queries) +
                                       " prompt queries give each prompt token";
    } else {
      // A trace without prompt_q (or --workload ...:prompt_queries=0): nothing to score the
      // prompt with, so the first tokens (where sinks sit) stand in for the heavy hitters.
      r.parameters["prefill_scores"] =
          "none (the workload has no prompt queries): the heavy slots start as the first " +
          std::to_string(heavy_) + " prompt tokens with score 0; scores accrue from decode steps";
      r.warnings.push_back(
          "h2o: no prompt queries to score the prompt with, so its first heavy hitters are the "
          "first " +
          std::to_string(heavy_) +
          " prompt tokens, not those prefill attention favours (capture prompt_q, e.g. with "
          "scripts/capture-trace.py, for H2O's own prefill)");
    }
    r.parameters["score"] =
        "accumulated softmax probability per KV head, summed over its query heads";
    offload_ = plan_kept_set(offload_opt_, cap_, policy_bytes(problem),
                             std::to_string(cap_) + " cached tokens and their scores",
                             "lower h2o.heavy_ratio/recent_ratio", problem, platform, r);
  }

  void load() override {
    Accelerator& acc = *platform_.accelerator;
    auto mem = kv_site(offload_).memory;
    const auto& shape = problem_->shape;
    const int B = problem_->batch, Hkv = shape.kv_heads, d = shape.head_dim;
    make_kv(mem, mem, cap_);
    scores_ = mem->allocate(static_cast<size_t>(B) * Hkv * cap_ * 4);
    tags_ = mem->allocate(static_cast<size_t>(B) * Hkv * cap_ * 8);
    logits_ = mem->allocate(static_cast<size_t>(B) * shape.q_heads * cap_ * 4);
    evict_ = mem->allocate(static_cast<size_t>(B) * Hkv * 4);
    evict_host_.assign(static_cast<size_t>(B) * Hkv, -1);
    pos_.assign(static_cast<size_t>(B) * Hkv, std::vector<int64_t>());
    count_.assign(B, 0);

    const int64_t n = problem_->prompt_len();
    std::vector<float> score_init(static_cast<size_t>(B) * Hkv * cap_, 0.0f);
    std::vector<int64_t> tag_init(static_cast<size_t>(B) * Hkv * cap_,
                                  std::numeric_limits<int64_t>::max());
    for (int b = 0; b < B; ++b) {
      const Workload& w = problem_->workloads[b];
      const std::vector<float> prefill = prefill_scores(w);  // [Hkv][n]
      // Keep the recent window and the top heavy hitters before it, per KV head.
      std::vector<std::vector<int64_t>> keep(Hkv);
      for (int h = 0; h < Hkv; ++h) {
        auto& k = keep[h];
        if (n <= heavy_ + recent_) {
          k.resize(n);
          std::iota(k.begin(), k.end(), 0);
        } else if (w.num_prompt_queries() == 0) {  // no prefill scores (plan_into says so)
          k.resize(heavy_);
          std::iota(k.begin(), k.end(), 0);
          for (int64_t t = n - recent_; t < n; ++t) k.push_back(t);
        } else {
          const int64_t older = n - recent_;
          std::vector<int32_t> idx(heavy_);
          cpu::topk_rows(prefill.data() + static_cast<size_t>(h) * n, 1, older, n, heavy_,
                         idx.data(), nullptr);
          k.assign(idx.begin(), idx.end());
          std::sort(k.begin(), k.end());
          for (int64_t t = older; t < n; ++t) k.push_back(t);
        }
      }
      const int64_t kept = static_cast<int64_t>(keep[0].size());
      std::vector<float> krow(static_cast<size_t>(Hkv) * d), vrow(krow.size());
      for (int64_t i = 0; i < kept; ++i) {
        for (int h = 0; h < Hkv; ++h) {
          std::memcpy(krow.data() + h * d, w.prompt.k_row(keep[h][i], h), d * 4);
          std::memcpy(vrow.data() + h * d, w.prompt.v_row(keep[h][i], h), d * 4);
        }
        kv_->cache(b).append_token(krow.data(), vrow.data(), kv_->k_arena(), kv_->v_arena());
      }
      for (int h = 0; h < Hkv; ++h) {
        const size_t bh = static_cast<size_t>(b) * Hkv + h;
        pos_[bh] = keep[h];
        for (int64_t i = 0; i < kept; ++i) {
          score_init[bh * cap_ + i] = prefill[static_cast<size_t>(h) * n + keep[h][i]];
          tag_init[bh * cap_ + i] = keep[h][i];
        }
      }
      count_[b] = kept;
    }
    if (offload_) {
      std::memcpy(scores_.data(), score_init.data(), scores_.size());
      std::memcpy(tags_.data(), tag_init.data(), tags_.size());
    } else {
      acc.copy_to_device(scores_.data(), score_init.data(), scores_.size());
      acc.copy_to_device(tags_.data(), tag_init.data(), tags_.size());
      acc.synchronize();
    }
    make_step_io();
  }

  void step(int s, StepResult& out) override {
    const int64_t ctx = problem_->context_at(s);
    if (offload_) {
      step_attending_on_host(out, [&] {
        std::vector<int64_t> slot = insert_new_token(s);
        attend_keeping_logits();
        accumulate_scores_and_pick_victims(slot, ctx);
      });
    } else {
      Accelerator& acc = *platform_.accelerator;
      // 1. The new token (produced on the accelerator) takes the slot the last eviction freed.
      std::vector<int64_t> slot = insert_new_token(s);
      // 2. Attention over every cached token, keeping the logits.
      attend_keeping_logits();
      // 3. Policy kernel: accumulate the probabilities, choose each head's next victim.
      accumulate_scores_and_pick_victims(slot, ctx);
      // The host drives the next step's write, so it reads the victims back.
      acc.copy_to_host(evict_host_.data(), evict_.data(), evict_.size());
      out.phase_ns[phase::kAccelerator] = collect_output(out);
    }
    set_attended(out, [&](int b, int kvh) -> const std::vector<int64_t>& {
      return pos_[static_cast<size_t>(b) * problem_->shape.kv_heads + kvh];
    });
    count_traffic(out.traffic);
  }

 private:
  // Writes step s's new token of every sequence into its cache: appended while the cache has
  // room, else into each KV head's victim slot. Returns the slot per (sequence, KV head).
  std::vector<int64_t> insert_new_token(int s) {
    const auto& shape = problem_->shape;
    const int B = problem_->batch, Hkv = shape.kv_heads, d = shape.head_dim;
    const int64_t pos = problem_->context_at(s) - 1;
    std::vector<int64_t> slot(static_cast<size_t>(B) * Hkv);
    for (int b = 0; b < B; ++b) {
      const NewToken tok = new_token(s, b, offload_);
      PagedKvCache& c = kv_->cache(b);
      if (count_[b] < cap_) {
        c.append_token(tok.k, tok.v, kv_->k_arena(), kv_->v_arena());
        for (int h = 0; h < Hkv; ++h) {
          slot[static_cast<size_t>(b) * Hkv + h] = count_[b];
          pos_[static_cast<size_t>(b) * Hkv + h].push_back(pos);
        }
        ++count_[b];
      } else {
        for (int h = 0; h < Hkv; ++h) {
          const size_t bh = static_cast<size_t>(b) * Hkv + h;
          const int64_t e = evict_host_[bh];
          if (e < 0 || e >= cap_)
            throw Error("h2o: no eviction victim for a full cache (internal)", {}, kExitFailure);
          c.write_token(h, e, tok.k + static_cast<size_t>(h) * d,
                        tok.v + static_cast<size_t>(h) * d);
          slot[bh] = e;
          pos_[bh][e] = pos;
        }
      }
    }
    return slot;
  }

  // Attention over every cached token, its logits kept in logits_ for the scores: enqueued on
  // the accelerator, or run by the host threads when offloaded.
  void attend_keeping_logits() {
    auto args = whole_cache_args(/*host=*/offload_);
    for (int b = 0; b < problem_->batch; ++b) {
      args[b].logits_out =
          logits_.as<float>() + static_cast<size_t>(b) * problem_->shape.q_heads * cap_;
      args[b].logits_stride = cap_;
    }
    if (offload_)
      cpu::decode_attention(args.data(), problem_->batch, *platform_.host_pool);
    else
      platform_.accelerator->decode_attention(args.data(), problem_->batch);
  }

  // The policy kernel (enqueued; run by the host threads when offloaded): the new tokens (in
  // `slot`) start from a zero score, every cached token adds the probability this step's queries
  // gave it, and a full cache picks per KV head the lowest score outside the recent window [ctx -
  // recent, ctx) as the next victim (evict_).
  void accumulate_scores_and_pick_victims(const std::vector<int64_t>& slot, int64_t ctx) {
    HeavyHitterArgs a;
    a.batch = problem_->batch;
    a.q_heads = problem_->shape.q_heads;
    a.kv_heads = problem_->shape.kv_heads;
    a.cap = cap_;
    a.logits = logits_.as<float>();
    a.lse = offload_ ? io_->lse_host.data() : io_->lse_dev();
    a.scores = scores_.as<float>();
    a.tags = tags_.as<int64_t>();
    a.victims = offload_ ? evict_host_.data() : evict_.as<int32_t>();
    a.filled = count_.data();
    a.fresh_slot = slot.data();
    a.fresh_tag = ctx - 1;
    a.recent_from = ctx - recent_;
    if (offload_)
      cpu::heavy_hitter_update(a, *platform_.host_pool);
    else
      platform_.accelerator->enqueue(a);
  }

  // The step's traffic: attention over the cached tokens with their logits, the score update
  // and victim scan, by whoever holds them; resident, the victims' indices read back (offloaded,
  // step_attending_on_host counts the copies).
  void count_traffic(Traffic& t) const {
    const auto& shape = problem_->shape;
    const int B = problem_->batch, Hq = shape.q_heads, Hkv = shape.kv_heads;
    int64_t attended_tokens = 0;
    for (int b = 0; b < B; ++b) attended_tokens += count_[b];
    const KvSite at = kv_site(offload_);
    const Processor who = at.who;
    const MemoryKind mem = at.where;
    count_dense_attention(at, attended_tokens, t);      // over the kept set, the new token stored
    t.write(who, mem, attended_tokens * Hq * 4);        // logits out
    t.read(who, mem, attended_tokens * Hq * 4);         // logits in
    t.read(who, mem, attended_tokens * Hkv * (4 + 8));  // scores, tags
    t.write(who, mem, attended_tokens * Hkv * 4);       // scores
    for (int b = 0; b < B; ++b)  // a full cache scans every head's scores for its victim
      if (count_[b] >= cap_) t.select(who, static_cast<double>(Hkv) * cap_);
    (who == Processor::cpu ? t.cpu_flops : t.accelerator_flops) +=
        2.0 * Hq * static_cast<double>(attended_tokens);  // the scores' update
    if (offload_) return;
    t.d2h_bytes = static_cast<int64_t>(evict_.size());
    t.kernel_launches = 2;
    t.syncs = 1;
  }

  int64_t policy_bytes(const Problem& p) const {
    return static_cast<int64_t>(p.batch) * cap_ *
               (p.shape.kv_heads * (4 + 8) + p.shape.q_heads * 4) +
           4LL * p.batch * p.shape.kv_heads;
  }

  // Prefill scores [kv_head][prompt_len]: the probabilities the workload's prompt queries give
  // each prompt token (causally: query at position p sees tokens <= p), summed per KV head.
  std::vector<float> prefill_scores(const Workload& w) const {
    const auto& shape = problem_->shape;
    const int Hq = shape.q_heads, d = shape.head_dim;
    const int64_t n = w.prompt_len(), nq = w.num_prompt_queries();
    std::vector<float> score(static_cast<size_t>(shape.kv_heads) * n, 0.0f);
    if (n == 0 || nq == 0) return score;
    PageArena arena(host_allocator(),
                    static_cast<size_t>(problem_->page_tokens) * d * dtype_size(shape.kv_dtype));
    PagedKvCache cache(shape, problem_->page_tokens);
    cache.append(w.prompt, 0, n, arena, arena, &ThreadPool::global());  // untimed: every CPU
    // A few prompt queries at a time bounds the logits buffer at long contexts.
    constexpr int64_t kQueriesPerPass = 8;
    std::vector<float, HugePageAllocator<float>> logits(static_cast<size_t>(kQueriesPerPass) * Hq *
                                                        n),
        lse(kQueriesPerPass * Hq), o(static_cast<size_t>(kQueriesPerPass) * Hq * d);
    for (int64_t i0 = 0; i0 < nq; i0 += kQueriesPerPass) {
      const int64_t m = std::min(kQueriesPerPass, nq - i0);
      std::vector<DecodeAttentionArgs> args(m);
      for (int64_t j = 0; j < m; ++j) {
        auto& a = args[j];
        a.q = w.prompt_queries.data() + static_cast<size_t>(i0 + j) * Hq * d;
        a.kv = cache.view();
        a.q_heads = Hq;
        a.token_end = n - nq + i0 + j + 1;  // causal
        a.o = o.data() + static_cast<size_t>(j) * Hq * d;
        a.lse = lse.data() + static_cast<size_t>(j) * Hq;
        a.logits_out = logits.data() + static_cast<size_t>(j) * Hq * n;
        a.logits_stride = n;
      }
      cpu::decode_attention(args.data(), static_cast<int>(m), *platform_.host_pool);
      for (int64_t j = 0; j < m; ++j)
        cpu::accumulate_probabilities(logits.data() + static_cast<size_t>(j) * Hq * n, n,
                                      lse.data() + static_cast<size_t>(j) * Hq, Hq, shape.kv_heads,
                                      args[j].token_end, score.data(), n);
    }
    cache.release_all();
    return score;
  }

  const double heavy_ratio_ = option("heavy_ratio", 0.1);
  const double recent_ratio_ = option("recent_ratio", 0.1);
  const int64_t heavy_opt_ = count_option("heavy", -1, 0);  // -1: not given (the ratios rule)
  const int64_t recent_opt_ = count_option("recent", -1, 0);
  const OffloadChoice offload_opt_ = offload_option("offload");
  bool offload_ = false;
  int64_t heavy_ = 0, recent_ = 0, cap_ = 0;
  Buffer scores_, tags_, logits_, evict_;  // accelerator memory (host memory when offloaded)
  std::vector<int32_t> evict_host_;        // [batch][kv_head] next slot to overwrite
  std::vector<std::vector<int64_t>> pos_;  // [batch][kv_head][slot] original positions
  std::vector<int64_t> count_;             // [batch] filled slots
};

}  // namespace

std::unique_ptr<Strategy> make_h2o(const StrategyOptions& options) {
  return baselines::make_strategy<H2o>(options);
}

}  // namespace hb
