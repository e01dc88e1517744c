// streamingllm (StreamingLLM, ICLR'24): the accelerator keeps the first `sinks` tokens
// (attention sinks) plus a window of the most recent tokens; everything in between is evicted
// for good. No scoring, no link traffic. Keys keep their original positions: the synthetic
// (and traced) keys carry position in their features, so nothing is re-rotated (the original
// caches pre-RoPE keys and re-applies RoPE at in-cache positions). When the kept tokens do not
// fit the accelerator (streamingllm.offload=auto), they live in host memory and the CPU attends
// them (the offloaded deployment of H2O's FlexGen port, its cpu_cache_compute path): the same
// tokens, so the same accuracy. See baselines/README.md.
#include <memory>
#include <numeric>

#include "baselines/common.h"
#include "baselines/kv_strategy_base.h"
#include "baselines/register.h"
#include "core/kv_set.h"
#include "core/phase_names.h"
#include "core/step_io.h"
#include "core/timer.h"
#include "kernels/cpu/attention.h"

namespace hb {
namespace {

using namespace baselines;

class StreamingLlm final : public baselines::KvStrategyBase {
 public:
  explicit StreamingLlm(const StrategyOptions& o) : KvStrategyBase("streamingllm", o) {
    require_options(ratio_ >= 0 && ratio_ <= 1, "streamingllm.budget_ratio must be in [0, 1]",
                    "e.g. --opt streamingllm.sinks=4 --opt streamingllm.budget_ratio=0.2");
  }

  void plan_into(const Problem& problem, const Platform& platform, PlanResult& r) override {
    const int64_t n = problem.prompt_len();
    sinks_ = sinks_opt_;
    // Default window: the total budget matches the other pruning strategies (20% of the context).
    window_ =
        window_opt_ >= 0 ? window_opt_ : std::max<int64_t>(1, ratio_tokens(ratio_, n) - sinks_);
    if (!budget_alone(problem, window_opt_ >= 0, "streamingllm.window", r)) return;
    if (const int64_t budget = problem.kv_budget_tokens; budget > 0) {
      // run --kv-budget: sinks + window = the budget (the window holds the new token).
      sinks_ = std::min<int64_t>(sinks_, budget - 1);
      window_ = budget - sinks_;
      r.parameters["kv_budget_mapping"] = "sinks " + std::to_string(sinks_) + " + window " +
                                          std::to_string(window_) +
                                          " (the new token included) = " + std::to_string(budget);
    }
    if (window_ < 1)
      throw Error("streamingllm.window must be at least 1", "e.g. --opt streamingllm.window=2044");
    cap_ = sinks_ + window_;
    r.parameters["sinks"] = std::to_string(sinks_);
    r.parameters["window"] = std::to_string(window_);
    r.parameters["budget_tokens"] = std::to_string(cap_);
    r.parameters["budget_ratio"] = window_opt_ >= 0 ? "-" : num(ratio_);
    r.parameters["positions"] = "original (keys carry position; no re-rotation)";
    offload_ = plan_kept_set(offload_opt_, cap_, 0, std::to_string(cap_) + " cached tokens",
                             "lower streamingllm.window", problem, platform, r);
  }

  void load() override {
    auto mem = kv_site(offload_).memory;
    make_kv(mem, mem, cap_);
    const int64_t n = problem_->prompt_len();
    const int B = problem_->batch;
    pos_.assign(B, {});
    next_.assign(B, 0);
    for (int b = 0; b < B; ++b) {
      const DenseKv& prompt = problem_->workloads[b].prompt;
      PagedKvCache& c = kv_->cache(b);
      if (n <= cap_) {
        c.append(prompt, 0, n, kv_->k_arena(), kv_->v_arena());
        pos_[b].resize(n);
        std::iota(pos_[b].begin(), pos_[b].end(), 0);
      } else {
        c.append(prompt, 0, sinks_, kv_->k_arena(), kv_->v_arena());
        c.append(prompt, n - window_, n, kv_->k_arena(), kv_->v_arena());
        for (int64_t t = 0; t < sinks_; ++t) pos_[b].push_back(t);
        for (int64_t t = n - window_; t < n; ++t) pos_[b].push_back(t);
      }
      next_[b] = sinks_;  // the window's oldest slot once the cache is full
    }
    make_step_io();
  }

  void step(int s, StepResult& out) override {
    if (offload_) {
      step_attending_on_host(out, [&] {
        insert_new_token(s);
        auto args = whole_cache_args(/*host=*/true);
        cpu::decode_attention(args.data(), problem_->batch, *platform_.host_pool);
      });
    } else {
      insert_new_token(s);
      auto args = whole_cache_args();
      platform_.accelerator->decode_attention(args.data(), problem_->batch);
      out.phase_ns[phase::kAccelerator] = collect_output(out);
      out.traffic.kernel_launches = 1;
      out.traffic.syncs = 1;
    }
    set_attended(out, [&](int b, int) -> const std::vector<int64_t>& { return pos_[b]; });
    count_attention(out.traffic);
  }

 private:
  // The new token enters the window, evicting the oldest one: from the workload on the
  // accelerator (where the QKV projection left it), from io_'s host rows when offloaded.
  void insert_new_token(int s) {
    const auto& shape = problem_->shape;
    const int64_t pos = problem_->context_at(s) - 1;
    for (int b = 0; b < problem_->batch; ++b) {
      const NewToken tok = new_token(s, b, offload_);
      const size_t d = static_cast<size_t>(shape.head_dim);
      PagedKvCache& c = kv_->cache(b);
      if (static_cast<int64_t>(pos_[b].size()) < cap_) {
        c.append_token(tok.k, tok.v, kv_->k_arena(), kv_->v_arena());
        pos_[b].push_back(pos);
      } else {
        const int64_t slot = next_[b];
        for (int h = 0; h < shape.kv_heads; ++h)
          c.write_token(h, slot, tok.k + h * d, tok.v + h * d);
        pos_[b][slot] = pos;
        next_[b] = slot + 1 == cap_ ? sinks_ : slot + 1;
      }
    }
  }

  // Dense attention over the kept tokens by whoever holds them.
  void count_attention(Traffic& t) const {
    int64_t attended_tokens = 0;
    for (const auto& p : pos_) attended_tokens += static_cast<int64_t>(p.size());
    count_dense_attention(kv_site(offload_), attended_tokens, t);
  }

  const int64_t sinks_opt_ = count_option("sinks", 4, 0);
  const int64_t window_opt_ = count_option("window", -1, 1);  // -1: not given (budget_ratio)
  const double ratio_ = option("budget_ratio", 0.2);
  const OffloadChoice offload_opt_ = offload_option("offload");
  bool offload_ = false;
  int64_t sinks_ = 4, window_ = 0, cap_ = 0;
  std::vector<std::vector<int64_t>> pos_;  // [batch][slot] original position of each cached token
  std::vector<int64_t> next_;              // [batch] next window slot to overwrite
};

}  // namespace

std::unique_ptr<Strategy> make_streamingllm(const StrategyOptions& options) {
  return baselines::make_strategy<StreamingLlm>(options);
}

}  // namespace hb
