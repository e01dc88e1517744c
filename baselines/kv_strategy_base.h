#pragma once
// KvStrategyBase: the state and life-cycle steps every baseline shares, so each strategy's file
// holds only its policy (core/strategy.h has the life cycle: plan -> load -> prepare_step ->
// step). plan() keeps the problem and platform and asks the strategy's plan_into() for its
// decision; load() builds the KV set (make_kv / load_whole_prompt) and ends with
// make_step_io(). memory_regions() and prepare_step() are the common ones; a strategy with more
// memory to verify overrides memory_regions().
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/kv_set.h"
#include "core/step_io.h"
#include "core/strategy.h"

namespace hb::baselines {

class KvStrategyBase : public Strategy {
 public:
  explicit KvStrategyBase(std::string name) : name_(std::move(name)) {}
  std::string name() const final { return name_; }
  PlanResult plan(const Problem& problem, const Platform& platform) final {
    problem_ = &problem;
    platform_ = platform;
    PlanResult r;
    plan_into(problem, platform, r);
    return r;
  }
  std::vector<MemoryRegion> memory_regions() const override { return kv_->regions(); }
  void prepare_step(int s) override { io_->stage(s); }

 protected:
  // The strategy's placement decision: fills r's status, reason and effective parameters (r
  // starts "ok"); throws hb::Error for options that make no sense.
  virtual void plan_into(const Problem& problem, const Platform& platform, PlanResult& r) = 0;
  // The strategy's option `key` (--opt NAME.key=value) or `def`.
  double option(const StrategyOptions& o, const std::string& key, double def) const {
    return o.number(name_, key, def);
  }
  // Tokens a sequence holds after the last decode step when nothing is evicted.
  int64_t full_context() const { return problem_->prompt_len() + problem_->decode_steps(); }
  // An empty KV set, K on k_alloc and V on v_alloc, with pages reserved for `tokens` tokens per
  // sequence so no timed step allocates.
  void make_kv(std::shared_ptr<BufferAllocator> k_alloc, std::shared_ptr<BufferAllocator> v_alloc,
               int64_t tokens) {
    kv_ = std::make_unique<KvSet>(*problem_, std::move(k_alloc), std::move(v_alloc));
    kv_->reserve_tokens(tokens);
  }
  // The whole prompt on one allocator, with room for `tokens` tokens per sequence.
  void load_whole_prompt(std::shared_ptr<BufferAllocator> alloc, int64_t tokens) {
    make_kv(alloc, alloc, tokens);
    kv_->append_prompt(0, problem_->prompt_len());
  }
  void make_step_io() { io_ = std::make_unique<StepIO>(*problem_, *platform_.accelerator); }
  // Stores the new token's k, v (already copied into io_'s host rows) in every sequence's cache.
  void append_new_token_from_host_rows() {
    const size_t row = static_cast<size_t>(problem_->shape.kv_heads) * problem_->shape.head_dim;
    for (int b = 0; b < problem_->batch; ++b)
      kv_->cache(b).append_token(io_->k_host.data() + b * row, io_->v_host.data() + b * row,
                                 kv_->k_arena(), kv_->v_arena());
  }

  std::string name_;
  const Problem* problem_ = nullptr;  // what plan() was given; load() and step() work on it
  Platform platform_;
  std::unique_ptr<KvSet> kv_;
  std::unique_ptr<StepIO> io_;
};

// Strategy S made from the command line's options (a strategy without options has a default
// constructor): what each file's make_ function for the catalogue (register.cpp) returns.
template <class S>
std::unique_ptr<Strategy> make_strategy(const StrategyOptions& options) {
  if constexpr (std::is_constructible_v<S, const StrategyOptions&>)
    return std::make_unique<S>(options);
  else
    return std::make_unique<S>();
}

}  // namespace hb::baselines
