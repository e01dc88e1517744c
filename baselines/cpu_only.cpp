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
    const HostTier& tier = platform.host_tiers.at(0);
    r.parameters["kv_tier"] = tier.location.to_string();
    r.parameters["host_threads"] = std::to_string(platform.host_pool->size());
    KvSet probe(problem, tier.allocator, tier.allocator);
    baselines::check_host_fit(tier, probe.bytes_for(full_context()), r);
  }

  void load() override {
    const HostTier& tier = platform_.host_tiers.at(0);
    load_whole_prompt(tier.allocator, full_context());
    make_step_io();
  }

  void step(int s, StepResult& out) override {
    Accelerator& acc = *platform_.accelerator;
    const auto& shape = problem_->shape;
    const int B = problem_->batch;
    int64_t t0 = now_ns();
    acc.copy_to_host(io_->q_host.data(), io_->q_dev(), io_->q_bytes());
    acc.copy_to_host(io_->k_host.data(), io_->k_dev(), io_->kv_row_bytes());
    acc.copy_to_host(io_->v_host.data(), io_->v_dev(), io_->kv_row_bytes());
    acc.synchronize();
    int64_t t1 = now_ns();
    out.phase_ns[phase::kTransfer] = t1 - t0;

    append_new_token_from_host_rows();
    auto args = baselines::batch_attention_args(
        *problem_, *io_, [&](int b) { return kv_->cache(b).view(); }, true);
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
