// offload (FlexGen's default path 0, HF OffloadedCache): all KV lives in host memory on the
// first host tier memtier offers. Each decode step the new token's k, v go down to the host
// cache, then the layer's whole KV streams up to the accelerator in chunks through two chunk
// buffers (the copy of chunk c+1 overlaps attention on chunk c), each chunk leaves an
// (o, lse) partial and one LSE merge gives the exact output. See baselines/README.md.
#include <memory>

#include "baselines/common.h"
#include "baselines/kv_strategy_base.h"
#include "baselines/register.h"
#include "core/kv_set.h"
#include "core/phase_names.h"
#include "core/step_io.h"
#include "core/timer.h"
#include "kernels/cpu/attention.h"
#include "kernels/nvtx.h"

namespace hb {
namespace {

using namespace baselines;

class Offload final : public baselines::KvStrategyBase {
 public:
  // offload.chunk_tokens is checked as it is read (count_option: a whole count >= 1).
  explicit Offload(const StrategyOptions& o) : KvStrategyBase("offload", o) {}

  void plan_into(const Problem& problem, const Platform& platform, PlanResult& r) override {
    const int P = problem.page_tokens;
    // Chunks are whole pages so no page crosses the link twice.
    chunk_ = pages_for(chunk_opt_, P) * P;
    const HostTier& tier = platform.host_tiers.at(0);
    r.parameters["kv_tier"] = tier.location.to_string();
    r.parameters["chunk_tokens"] = std::to_string(chunk_);
    r.parameters["chunk_buffers"] = std::to_string(2);  // (a literal trips GCC 12 -Wrestrict)
    if (!check_host_kv_fit(platform, r)) return;
    // Two chunk buffers (K and V blocks of every sequence and head; one spare page per head
    // as the CUDA streaming path sizes them) plus the step's activations.
    const int64_t block =
        static_cast<int64_t>(P) * problem.shape.head_dim * dtype_size(problem.shape.kv_dtype);
    const int64_t buffers =
        2LL * problem.batch * problem.shape.kv_heads * 2 * (chunk_ / P + 1) * block;
    r.parameters["chunk_buffer_bytes"] = std::to_string(buffers);
    check_accelerator_fit(platform, buffers + step_io_bytes(problem),
                          "two chunk buffers of " + std::to_string(chunk_) + " tokens",
                          "lower offload.chunk_tokens", r);
  }

  void load() override {
    // Pinned (on the tier's own node) so the chunk copies stream at full link speed and
    // overlap, as FlexGen keeps its offloaded KV in pinned memory.
    load_whole_prompt(platform_.accelerator->staging_over(platform_.host_tiers.at(0).allocator));
    make_step_io();
  }

  // Chunk c+1's copy overlaps attention on chunk c (double buffering); the host append of the
  // new token and the final waits are serial.
  OverlapStructure overlap() const override {
    return {{{Resource::transfer, Resource::accelerator}, {Resource::cpu}, {Resource::sync}}};
  }

  void step(int s, StepResult& out) override {
    Accelerator& acc = *platform_.accelerator;
    const auto& shape = problem_->shape;
    const int B = problem_->batch;
    // 1. The new token's k, v (produced on the accelerator) are stored in the host cache.
    const int64_t t0 = now_ns();
    {
      HB_NVTX_RANGE("hb.offload.append_new_token");
      copy_new_token_to_host();
      acc.synchronize();
      append_new_token_from_host_rows();
    }
    const int64_t t1 = now_ns();
    out.phase_ns[phase::kTransfer] = t1 - t0;

    // 2. Stream the whole KV through the accelerator, copy overlapping attention.
    {
      HB_NVTX_RANGE("hb.offload.stream_attention");
      auto args = whole_cache_args();
      acc.enqueue(StreamAttentionArgs{args.data(), B, chunk_});
      collect_output(out);
    }
    out.phase_ns[phase::kAccelerator] = now_ns() - t1;

    const int64_t ctx = problem_->context_at(s);
    const int P = problem_->page_tokens;
    const MemoryKind tier = platform_.host_tiers.at(0).location.kind;
    const int64_t moved = pages_for(ctx, P) * P * shape.kv_bytes_per_token() * B;  // whole pages
    Traffic& t = out.traffic;
    t.d2h_bytes = static_cast<int64_t>(2 * io_->kv_row_bytes());
    t.h2d_bytes = moved;
    t.write(Processor::cpu, tier, shape.kv_bytes_per_token() * B);    // host append
    t.read(Processor::accelerator, tier, moved);                      // copy engine reads host
    t.write(Processor::accelerator, MemoryKind::accelerator, moved);  // into chunk buffers
    t.read(Processor::accelerator, MemoryKind::accelerator,
           ctx * shape.kv_bytes_per_token() * B);  // attention
    t.accelerator_flops = 4.0 * shape.q_heads * shape.head_dim * static_cast<double>(ctx) * B;
    t.kernel_launches = pages_for(ctx, static_cast<int>(chunk_)) + 1;  // one per chunk + the merge
    t.syncs = 2;
  }

 private:
  const int64_t chunk_opt_ = count_option("chunk_tokens", 1024, 1);
  int64_t chunk_ = 0;
};

}  // namespace

std::unique_ptr<Strategy> make_offload(const StrategyOptions& options) {
  return baselines::make_strategy<Offload>(options);
}

}  // namespace hb
