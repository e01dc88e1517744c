// full-gpu: the all-resident reference. Every token's KV lives in accelerator memory and each
// step runs dense attention there; it is what the other strategies try to approach when the
// KV does not fit, and it reports status "oom" when it does not fit itself.
#include <memory>

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

class FullGpu final : public baselines::KvStrategyBase {
 public:
  FullGpu() : KvStrategyBase("full-gpu") {}

  void plan_into(const Problem& problem, const Platform& platform, PlanResult& r) override {
    const int64_t need = kv_bytes(platform.accelerator->memory(), full_context());
    r.parameters["kv_bytes"] = std::to_string(need);
    // The step's q, k, v and output rows (make_step_io) live beside the KV.
    baselines::check_accelerator_fit(platform, need + baselines::step_io_bytes(problem), "all KV",
                                     "", r);
  }

  void load() override {
    load_whole_prompt(platform_.accelerator->memory());
    make_step_io();
  }

  void step(int s, StepResult& out) override {
    Accelerator& acc = *platform_.accelerator;
    const auto& shape = problem_->shape;
    const int B = problem_->batch;
    // The new token's k, v were produced on the accelerator: appending is accelerator-local.
    kv_->append_step(s);
    auto args = whole_cache_args();
    acc.decode_attention(args.data(), B);
    out.phase_ns[phase::kAccelerator] = collect_output(out);

    const int64_t ctx = problem_->context_at(s);
    Traffic& t = out.traffic;
    t.read(Processor::accelerator, MemoryKind::accelerator, ctx * shape.kv_bytes_per_token() * B);
    t.write(Processor::accelerator, MemoryKind::accelerator, shape.kv_bytes_per_token() * B);
    t.accelerator_flops = 4.0 * shape.q_heads * shape.head_dim * static_cast<double>(ctx) * B;
    t.kernel_launches = 1;
    t.syncs = 1;
  }
};

}  // namespace

std::unique_ptr<Strategy> make_full_gpu(const StrategyOptions& options) {
  return baselines::make_strategy<FullGpu>(options);
}

}  // namespace hb
