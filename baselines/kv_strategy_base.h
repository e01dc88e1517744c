#pragma once
// KvStrategyBase: the state and life-cycle steps every baseline shares, so each strategy's file
// holds only its policy (core/strategy.h has the life cycle: plan -> load -> prepare_step ->
// step). plan() keeps the problem and platform and asks the strategy's plan_into() for its
// decision; load() builds the KV set (make_kv / load_whole_prompt) and ends with
// make_step_io(). memory_regions() and prepare_step() are the common ones; a strategy with more
// memory to verify overrides memory_regions(). The helpers below are the steps several
// strategies take alike (options, fit checks, the new token's copy, the output, `attended`).
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "baselines/common.h"
#include "core/error.h"
#include "core/kv_set.h"
#include "core/phase_names.h"
#include "core/step_io.h"
#include "core/strategy.h"
#include "core/timer.h"

namespace hb::baselines {

class KvStrategyBase : public Strategy {
 public:
  explicit KvStrategyBase(std::string name) : name_(std::move(name)) {}
  // A strategy with options: its members read them in their initializers with option(key, def)
  // (options_ is valid only while the strategy is being constructed: make_strategy's argument).
  KvStrategyBase(std::string name, const StrategyOptions& options)
      : name_(std::move(name)), options_(&options) {}
  std::string name() const final { return name_; }
  PlanResult plan(const Problem& problem, const Platform& platform) final {
    problem_ = &problem;
    platform_ = platform;
    PlanResult r;
    plan_into(problem, platform, r);
    // run --kv-budget: a strategy that maps it says how; the others attend everything.
    if (problem.kv_budget_tokens > 0 && r.status == PlanStatus::ok &&
        !r.parameters.count("kv_budget_mapping"))
      r.parameters["kv_budget_mapping"] = "dense: attends all (--kv-budget ignored)";
    return r;
  }
  std::vector<MemoryRegion> memory_regions() const override { return kv_->regions(); }
  void prepare_step(int s) override { io_->stage(s); }

 protected:
  // The strategy's placement decision: fills r's status, reason and effective parameters (r
  // starts "ok"); throws hb::Error for options that make no sense.
  virtual void plan_into(const Problem& problem, const Platform& platform, PlanResult& r) = 0;
  // The strategy's option `key` (--opt NAME.key=value) or `def`; for member initializers.
  double option(const std::string& key, double def, const parse::RealRange& range = {}) const {
    return options_->number(name_, key, def, range);
  }
  // A whole-count option (tokens, pages) in [min, max], checked before any cast (core/parse.h).
  int64_t count_option(const std::string& key, int64_t def, int64_t min,
                       int64_t max = kMaxOptionTokens) const {
    return options_->count(name_, key, def, min, max);
  }
  // The strategy's option `key` read as an OffloadChoice (auto, 1, 0; default auto), for member
  // initializers; anything else is refused with the values allowed.
  OffloadChoice offload_option(const std::string& key) const {
    const std::string v =
        options_->text(name_, key, kOffloadChoices.name(OffloadChoice::automatic));
    if (auto c = kOffloadChoices.parse(v)) return *c;
    throw Error("--opt " + name_ + "." + key + "=" + v + " is not one of " + kOffloadChoices.list(),
                "e.g. --opt " + name_ + "." + key + "=auto");
  }
  // Whether to offload under `choice` (option `key`): auto offloads exactly when the all-resident
  // plan's `resident_need` accelerator bytes do not fit what is free. Records the deployment and
  // why in r's parameters.
  bool choose_offload(OffloadChoice choice, int64_t resident_need, const std::string& key,
                      const Platform& platform, PlanResult& r) const {
    const int64_t cap = accelerator_free(platform);
    const std::string fit = "all-resident needs " + mib(resident_need) + ", budget " + mib(cap);
    const std::string opt = name_ + "." + key;
    bool offload = choice == OffloadChoice::always;
    std::string why = opt + "=" + kOffloadChoices.name(choice) + " (" + fit + ")";
    if (choice == OffloadChoice::automatic) {
      offload = resident_need > cap;
      why = fit + (offload ? ": KV offloaded to host memory" : ": fits") + " (" + opt + "=auto)";
    }
    record_deployment(r, offload, why);
    return offload;
  }
  // A pruning strategy's deployment (h2o, streamingllm): its kept set (`kept_tokens` per
  // sequence plus `state_bytes` of policy state) on the accelerator when that fits or
  // NAME.offload=0, else on the first host tier, attended there by the CPU (H2O's FlexGen port,
  // its cpu_cache_compute path). Records it in r; oom (naming `lower` and the option) when the
  // chosen home cannot hold it. Returns whether it offloads.
  bool plan_kept_set(OffloadChoice choice, int64_t kept_tokens, int64_t state_bytes,
                     const std::string& what, const std::string& lower, const Problem& problem,
                     const Platform& platform, PlanResult& r) const {
    const int64_t io = step_io_bytes(problem);
    const int64_t resident =
        kv_bytes(platform.accelerator->memory(), kept_tokens) + state_bytes + io;
    if (!choose_offload(choice, resident, "offload", platform, r)) {
      check_accelerator_fit(
          platform, resident, what,
          lower + ", or " + name_ + ".offload=auto or 1 keeps them in host memory", r);
      return false;
    }
    const HostTier& tier = platform.host_tiers.at(0);
    r.parameters["kv_tier"] = tier.location.to_string();
    r.parameters["attended_by"] = "cpu (FlexGen's cpu_cache_compute path)";
    if (check_host_fit(tier, kv_bytes(tier.allocator, kept_tokens) + state_bytes, r))
      check_accelerator_fit(platform, io, "the step's q, k, v and output rows", "", r);
    return true;
  }
  // Whether --opt NAME.key was given at all (for options run --kv-budget replaces).
  bool option_given(const std::string& key) const {
    return options_->all().count(name_ + "." + key) > 0;
  }
  // run --kv-budget together with an option that sets the same budget: declined with a reason
  // (r unsupported); returns true when there is no such clash.
  static bool budget_alone(const Problem& problem, bool option_set, const std::string& option,
                           PlanResult& r) {
    if (problem.kv_budget_tokens <= 0 || !option_set) return true;
    r.status = PlanStatus::unsupported;
    r.reason =
        "--kv-budget and --opt " + option + " both set the attention budget: drop one of them";
    return false;
  }
  // Refuses options that make no sense (exit 2). Called from the constructor, not plan_into():
  // the runner makes every strategy once before the sweep, so a bad option is refused up front
  // instead of failing every point.
  static void require_options(bool valid, const std::string& what, const std::string& example) {
    if (!valid) throw Error(what, example);
  }
  // Tokens a sequence holds after the last decode step when nothing is evicted.
  int64_t full_context() const { return problem_->prompt_len() + problem_->decode_steps(); }
  // Bytes `tokens` tokens per sequence take in a KV set on `alloc` (page-rounded, K and V).
  int64_t kv_bytes(std::shared_ptr<BufferAllocator> alloc, int64_t tokens) const {
    return KvSet(*problem_, alloc, alloc).bytes_for(tokens);
  }
  // Sets status "oom" when the whole run's KV (nothing evicted) does not fit the first host tier,
  // where the host-resident strategies keep it; returns fit.
  bool check_host_kv_fit(const Platform& platform, PlanResult& r) const {
    const HostTier& tier = platform.host_tiers.at(0);
    return check_host_fit(tier, kv_bytes(tier.allocator, full_context()), r);
  }
  // An empty KV set, K on k_alloc and V on v_alloc, with pages reserved for `tokens` tokens per
  // sequence so no timed step allocates.
  void make_kv(std::shared_ptr<BufferAllocator> k_alloc, std::shared_ptr<BufferAllocator> v_alloc,
               int64_t tokens) {
    kv_ = std::make_unique<KvSet>(*problem_, std::move(k_alloc), std::move(v_alloc));
    kv_->reserve_tokens(tokens);
  }
  // The whole prompt on one allocator, with room for every decode step's token.
  void load_whole_prompt(std::shared_ptr<BufferAllocator> alloc) {
    make_kv(alloc, alloc, full_context());
    kv_->append_prompt(0, problem_->prompt_len(), &ThreadPool::global());  // untimed: every CPU
  }
  void make_step_io() { io_ = std::make_unique<StepIO>(*problem_, *platform_.accelerator); }
  // Enqueues the D2H copy of the new token's k, v (produced on the accelerator) into io_'s host
  // rows, for a strategy whose cache lives in host memory.
  void copy_new_token_to_host() {
    Accelerator& acc = *platform_.accelerator;
    acc.copy_to_host(io_->k_host.data(), io_->k_dev(), io_->kv_row_bytes());
    acc.copy_to_host(io_->v_host.data(), io_->v_dev(), io_->kv_row_bytes());
  }
  // Stores the new token's k, v (already copied into io_'s host rows) in every sequence's cache.
  void append_new_token_from_host_rows() {
    const size_t row = static_cast<size_t>(problem_->shape.kv_heads) * problem_->shape.head_dim;
    for (int b = 0; b < problem_->batch; ++b)
      kv_->cache(b).append_token(io_->k_host.data() + b * row, io_->v_host.data() + b * row,
                                 kv_->k_arena(), kv_->v_arena());
  }

  // Attention of every sequence over its whole cache (io_'s buffers; with `host` its host rows).
  std::vector<DecodeAttentionArgs> whole_cache_args(bool host = false) {
    return batch_attention_args(
        *problem_, *io_, [&](int b) { return kv_->cache(b).view(); }, host);
  }
  // Enqueues the output's copy to the host (for scoring only; not part of the strategy's work),
  // waits for the queue and hands the output over; returns the wait.
  int64_t collect_output(StepResult& out) {
    Accelerator& acc = *platform_.accelerator;
    acc.copy_to_host(io_->o_host.data(), io_->o_dev(), io_->o_bytes());
    const int64_t wait = acc.synchronize();
    out.o = io_->o_host.to_vector();
    return wait;
  }
  // FlexGen's CPU attention path (`cpu_cache_compute`) for a cache in host memory: q and the
  // new token's k, v go down to the host (io_'s host rows), `attend_on_host` stores the new token
  // and attends there, and the output goes back up. The KV never crosses the link: the copies
  // are the step's whole link traffic (d2h, h2d, two waits); phases transfer and cpu.
  template <class AttendOnHost>
  void step_attending_on_host(StepResult& out, AttendOnHost&& attend_on_host) {
    Accelerator& acc = *platform_.accelerator;
    const int64_t t0 = now_ns();
    acc.copy_to_host(io_->q_host.data(), io_->q_dev(), io_->q_bytes());
    copy_new_token_to_host();
    acc.synchronize();
    const int64_t t1 = now_ns();
    out.phase_ns[phase::kTransfer] = t1 - t0;
    attend_on_host();
    const int64_t t2 = now_ns();
    out.phase_ns[phase::kCpu] = t2 - t1;
    acc.copy_to_device(io_->o_dev(), io_->o_host.data(), io_->o_bytes());
    acc.synchronize();
    out.phase_ns[phase::kTransfer] += now_ns() - t2;
    out.o = io_->o_host.to_vector();
    out.traffic.d2h_bytes = static_cast<int64_t>(io_->q_bytes() + 2 * io_->kv_row_bytes());
    out.traffic.h2d_bytes = static_cast<int64_t>(io_->o_bytes());
    out.traffic.syncs = 2;
  }
  // Where a kept KV lives and who attends it: on the host, the first host tier and the CPU
  // (FlexGen's cpu_cache_compute, step_attending_on_host); else the accelerator's memory and the
  // accelerator.
  struct KvSite {
    Processor who;
    MemoryKind where;
    std::shared_ptr<BufferAllocator> memory;
  };
  KvSite kv_site(bool on_host) const {
    if (on_host)
      return {Processor::cpu, platform_.host_tiers.at(0).location.kind,
              platform_.host_tiers.at(0).allocator};
    return {Processor::accelerator, MemoryKind::accelerator, platform_.accelerator->memory()};
  }
  // Dense attention over `attended` cached tokens (summed over the batch) at `at`: each k, v row
  // read once, each sequence's new token stored, 4 x q_heads x head_dim flops a token.
  void count_dense_attention(const KvSite& at, int64_t attended, Traffic& t) const {
    const auto& shape = problem_->shape;
    t.read(at.who, at.where, attended * shape.kv_bytes_per_token());
    t.write(at.who, at.where, shape.kv_bytes_per_token() * problem_->batch);
    (at.who == Processor::cpu ? t.cpu_flops : t.accelerator_flops) =
        4.0 * shape.q_heads * shape.head_dim * static_cast<double>(attended);
  }
  // Sequence b's new token at step s, k and v each [kv_heads][head_dim]: the workload's, as the
  // QKV projection left it on the accelerator, or with `from_host` io_'s host rows, where
  // copy_new_token_to_host brought it for a cache in host memory.
  struct NewToken {
    const float* k;
    const float* v;
  };
  NewToken new_token(int s, int b, bool from_host) const {
    if (from_host) {
      const size_t at =
          static_cast<size_t>(b) * problem_->shape.kv_heads * problem_->shape.head_dim;
      return {io_->k_host.data() + at, io_->v_host.data() + at};
    }
    const DecodeStep& st = problem_->workloads[b].step(s);
    return {st.k.data(), st.v.data()};
  }
  // Fills out.attended: every query head of sequence b attended the original positions
  // positions_of(b, its KV head) (GQA: a group shares its KV head's tokens).
  template <class PositionsOf>
  void set_attended(StepResult& out, PositionsOf&& positions_of) const {
    const auto& shape = problem_->shape;
    const int G = shape.group_size();
    out.attended.resize(static_cast<size_t>(problem_->batch) * shape.q_heads);
    for (int b = 0; b < problem_->batch; ++b)
      for (int kvh = 0; kvh < shape.kv_heads; ++kvh) {
        const auto& v = positions_of(b, kvh);
        for (int g = 0; g < G; ++g)
          out.attended[static_cast<size_t>(b) * shape.q_heads + kvh * G + g] = v;
      }
  }

  std::string name_;
  const StrategyOptions* options_ = nullptr;  // during construction only (see the constructor)
  const Problem* problem_ = nullptr;          // what plan() was given; load() and step() work on it
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
