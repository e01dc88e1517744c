// full-gpu: the all-resident reference. Every token's KV lives in accelerator memory and each
// step runs dense attention there; it is what the other strategies try to approach when the
// KV does not fit, and it reports status "oom" when it does not fit itself.
#include <memory>

#include "baselines/common.h"
#include "baselines/register.h"
#include "core/kv_set.h"
#include "core/step_io.h"
#include "core/timer.h"
#include "kernels/cpu/attention.h"

namespace hb {
namespace {

class FullGpu final : public Strategy {
 public:
  std::string name() const override { return "full-gpu"; }

  PlanResult plan(const Problem& problem, const Platform& platform) override {
    problem_ = &problem;
    platform_ = platform;
    PlanResult r;
    const int64_t tokens = problem.prompt_len() + problem.decode_steps();
    KvSet probe(problem, platform.accelerator->memory(), platform.accelerator->memory());
    const int64_t need = probe.bytes_for(tokens);
    const int64_t cap = platform.accelerator->info().capacity_bytes - platform.accelerator->bytes_in_use();
    r.parameters["kv_bytes"] = std::to_string(need);
    if (need > cap) {
      r.status = "oom";
      r.reason = "all KV needs " + std::to_string(need >> 20) + " MiB of accelerator memory; " +
                 std::to_string(cap >> 20) + " MiB available";
    }
    return r;
  }

  void load() override {
    auto mem = platform_.accelerator->memory();
    kv_ = std::make_unique<KvSet>(*problem_, mem, mem);
    kv_->reserve_tokens(problem_->prompt_len() + problem_->decode_steps());
    kv_->append_prompt(0, problem_->prompt_len());
    io_ = std::make_unique<StepIO>(*problem_, *platform_.accelerator);
  }

  std::vector<MemoryRegion> memory_regions() const override { return kv_->regions(); }
  void prepare_step(int s) override { io_->stage(s); }

  void step(int s, StepResult& out) override {
    Accelerator& acc = *platform_.accelerator;
    const auto& shape = problem_->shape;
    const int B = problem_->batch;
    // The new token's k, v were produced on the accelerator: appending is accelerator-local.
    kv_->append_step(s);
    auto args = baselines::batch_attention_args(*problem_, *io_, [&](int b) { return kv_->cache(b).view(); });
    acc.decode_attention(args.data(), B);
    acc.copy_to_host(io_->o_host.data(), io_->o_dev(), io_->o_bytes());
    out.phase_ns["accelerator"] = acc.synchronize();
    out.o = io_->o_host;

    const int64_t ctx = problem_->context_at(s);
    Traffic& t = out.traffic;
    t.read(Processor::accelerator, MemoryKind::accelerator, ctx * shape.kv_bytes_per_token() * B);
    t.write(Processor::accelerator, MemoryKind::accelerator, shape.kv_bytes_per_token() * B);
    t.accelerator_flops = 4.0 * shape.q_heads * shape.head_dim * static_cast<double>(ctx) * B;
    t.kernel_launches = 1;
    t.syncs = 1;
  }

 private:
  const Problem* problem_ = nullptr;
  Platform platform_;
  std::unique_ptr<KvSet> kv_;
  std::unique_ptr<StepIO> io_;
};

}  // namespace

void register_full_gpu(StrategyRegistry& r) {
  r.add({"full-gpu", "all KV resident in accelerator memory, dense attention there (oom when it does not fit)",
         "reference", [](const StrategyOptions&) { return std::make_unique<FullGpu>(); }});
}

}  // namespace hb
