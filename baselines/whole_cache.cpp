// full-gpu and cpu-only: the whole context's KV at one home, attended densely where it lives.
// They are one policy with one parameter, the home (FlexGen's own split: its policy's cache
// placement and `cpu_cache_compute` choose between the same two paths), so the loading, the
// plan's fit checks and the dense attention's traffic are written once; the home decides who
// attends and what crosses the link.
//   full-gpu  the all-resident reference: every token's KV in accelerator memory and dense
//             attention there; it is what the other strategies try to approach when the KV
//             does not fit, and it reports status "oom" when it does not fit itself.
//   cpu-only  FlexGen's CPU attention path / DeepSpeed ZeRO-Inference --kv-offload: all KV in
//             host memory on the first host tier memtier offers; each step the query and the
//             new token's k, v go down to the host, the CPU attends over the whole cache, and
//             the output goes back up. The KV itself never crosses the link.
#include <memory>

#include "baselines/common.h"
#include "baselines/kv_strategy_base.h"
#include "baselines/register.h"
#include "core/kv_set.h"
#include "core/phase_names.h"
#include "core/step_io.h"
#include "kernels/cpu/attention.h"

namespace hb {
namespace {

enum class KvHome { accelerator, host };

class WholeCache final : public baselines::KvStrategyBase {
 public:
  explicit WholeCache(KvHome home)
      : KvStrategyBase(home == KvHome::host ? "cpu-only" : "full-gpu"), home_(home) {}

  void plan_into(const Problem& problem, const Platform& platform, PlanResult& r) override {
    // The step's q, k, v and output rows (make_step_io) live in accelerator memory either way.
    const int64_t io = baselines::step_io_bytes(problem);
    if (home_ == KvHome::host) {
      r.parameters["kv_tier"] = platform.host_tiers.at(0).location.to_string();
      r.parameters["host_threads"] = std::to_string(platform.host_pool->size());
      if (!check_host_kv_fit(platform, r)) return;
      baselines::check_accelerator_fit(platform, io, "the step's q, k, v and output rows", "", r);
      return;
    }
    const int64_t need = kv_bytes(platform.accelerator->memory(), full_context());
    r.parameters["kv_bytes"] = std::to_string(need);
    baselines::check_accelerator_fit(platform, need + io, "all KV", "", r);
  }

  void load() override {
    load_whole_prompt(kv_site(home_ == KvHome::host).memory);
    make_step_io();
  }

  void step(int s, StepResult& out) override {
    if (home_ == KvHome::host)
      step_on_host(out);
    else
      step_on_accelerator(s, out);
    // Every sequence attends its whole cache where it lives.
    count_dense_attention(kv_site(home_ == KvHome::host), problem_->context_at(s) * problem_->batch,
                          out.traffic);
  }

 private:
  // The new token's k, v were produced on the accelerator: appending is accelerator-local.
  void step_on_accelerator(int s, StepResult& out) {
    kv_->append_step(s);
    auto args = whole_cache_args();
    platform_.accelerator->decode_attention(args.data(), problem_->batch);
    out.phase_ns[phase::kAccelerator] = collect_output(out);
    out.traffic.kernel_launches = 1;
    out.traffic.syncs = 1;
  }

  // q and the new token's k, v down to the host, CPU attention there, the output back up.
  void step_on_host(StepResult& out) {
    step_attending_on_host(out, [&] {
      append_new_token_from_host_rows();
      auto args = whole_cache_args(/*host=*/true);
      cpu::decode_attention(args.data(), problem_->batch, *platform_.host_pool);
    });
  }

  const KvHome home_;
};

}  // namespace

std::unique_ptr<Strategy> make_full_gpu(const StrategyOptions&) {
  return std::make_unique<WholeCache>(KvHome::accelerator);
}

std::unique_ptr<Strategy> make_cpu_only(const StrategyOptions&) {
  return std::make_unique<WholeCache>(KvHome::host);
}

}  // namespace hb
