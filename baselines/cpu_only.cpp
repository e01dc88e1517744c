// cpu-only (FlexGen's CPU attention path / DeepSpeed ZeRO-Inference --kv-offload): all KV in
// host memory on the first host tier memtier offers; each step the query and the new token's
// k, v go down to the host, the CPU attends over the whole cache, and the output goes back up.
// The KV itself never crosses the link.
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

class CpuOnly final : public baselines::KvStrategyBase {
 public:
  CpuOnly() : KvStrategyBase("cpu-only") {}

  void plan_into(const Problem& problem, const Platform& platform, PlanResult& r) override {
    r.parameters["kv_tier"] = platform.host_tiers.at(0).location.to_string();
    r.parameters["host_threads"] = std::to_string(platform.host_pool->size());
    if (!check_host_kv_fit(platform, r)) return;
    // The step's q, k, v and output rows still pass through the accelerator (make_step_io).
    baselines::check_accelerator_fit(platform, baselines::step_io_bytes(problem),
                                     "the step's q, k, v and output rows", "", r);
  }

  void load() override {
    load_whole_prompt(platform_.host_tiers.at(0).allocator);
    make_step_io();
  }

  void step(int s, StepResult& out) override {
    Accelerator& acc = *platform_.accelerator;
    const auto& shape = problem_->shape;
    const int B = problem_->batch;
    int64_t t0 = now_ns();
    acc.copy_to_host(io_->q_host.data(), io_->q_dev(), io_->q_bytes());
    copy_new_token_to_host();
    acc.synchronize();
    int64_t t1 = now_ns();
    out.phase_ns[phase::kTransfer] = t1 - t0;

    append_new_token_from_host_rows();
    auto args = whole_cache_args(/*host=*/true);
    cpu::decode_attention(args.data(), B, *platform_.host_pool);
    int64_t t2 = now_ns();
    out.phase_ns[phase::kCpu] = t2 - t1;
    acc.copy_to_device(io_->o_dev(), io_->o_host.data(), io_->o_bytes());
    acc.synchronize();
    out.phase_ns[phase::kTransfer] += now_ns() - t2;
    out.o = io_->o_host;

    const int64_t ctx = problem_->context_at(s);
    const MemoryKind tier = platform_.host_tiers.at(0).location.kind;
    Traffic& t = out.traffic;
    t.read(Processor::cpu, tier, ctx * shape.kv_bytes_per_token() * B);
    t.write(Processor::cpu, tier, shape.kv_bytes_per_token() * B);
    t.d2h_bytes = static_cast<int64_t>(io_->q_bytes() + 2 * io_->kv_row_bytes());
    t.h2d_bytes = static_cast<int64_t>(io_->o_bytes());
    t.cpu_flops = 4.0 * shape.q_heads * shape.head_dim * static_cast<double>(ctx) * B;
    t.syncs = 2;
  }
};

}  // namespace

std::unique_ptr<Strategy> make_cpu_only(const StrategyOptions& options) {
  return baselines::make_strategy<CpuOnly>(options);
}

}  // namespace hb
