#pragma once
// The accelerator role in a strategy: memory with a capacity budget, plus an in-order queue of
// operations (copies and attention kernels) that runs asynchronously to the host CPU, like a
// CUDA stream. Two implementations: `cuda` (a real GPU, kernels/cuda) and `cpu` (a pool of CPU
// threads playing the GPU so every strategy runs end to end on GPU-less machines; its figures
// are labelled emulated). Strategies talk only to this interface, never to CUDA directly.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/accelerator_ops.h"
#include "core/error.h"
#include "core/kv_cache.h"
#include "core/attention_args.h"
#include "core/layer_work.h"
#include "core/memory.h"
#include "core/policy_args.h"
#include "core/vocabulary.h"

namespace hb {

class ThreadPool;

// Which accelerator: the cpu accelerator or a CUDA GPU. `auto_select` is only ever asked for
// (--accelerator auto: a usable GPU, else cpu, kernels/backend.h); a made accelerator is cpu or
// cuda. Text only on the command line, in the report and in messages.
enum class AcceleratorKind { auto_select, cpu, cuda };
inline constexpr Vocabulary<AcceleratorKind, 3> kAcceleratorKinds{{"auto", "cpu", "cuda"}};

struct AcceleratorInfo {
  // cpu or cuda; empty only in a report of a fleet rank that failed before it made one.
  std::optional<AcceleratorKind> kind;
  // The kind's text ("cpu", "cuda"; "" when not known): the report's accelerator axis.
  std::string kind_name() const { return kind ? kAcceleratorKinds.name(*kind) : ""; }
  std::string name;            // "cpu-accelerator (1 thread)", "NVIDIA H200"
  bool emulated = false;       // true for the cpu accelerator
  int64_t capacity_bytes = 0;  // KV budget in accelerator memory
  int device = 0;
  int numa_node = -1;   // host NUMA node local to the device (-1 unknown)
  std::string details;  // SMs, PCIe link, threads, ...
};

class Accelerator {
 public:
  virtual ~Accelerator() = default;
  virtual const AcceleratorInfo& info() const = 0;

  // Accelerator memory; allocations beyond the capacity budget throw hb::CapacityError with
  // exit code kExitFailure (the runner reports it as status "oom").
  virtual std::shared_ptr<BufferAllocator> memory() = 0;
  virtual int64_t bytes_in_use() const = 0;
  // Host memory the accelerator can copy from/to at full speed (pinned for CUDA), on a NUMA node.
  virtual std::shared_ptr<BufferAllocator> staging_memory(int numa_node) = 0;
  // Memory from `host` (a host tier's own allocator, so its placement is kept) made staging
  // memory: pinned and mapped for CUDA, so copies from it are asynchronous at full link speed.
  // Default: `host` as it is (an accelerator that reads host memory directly needs nothing).
  virtual std::shared_ptr<BufferAllocator> staging_over(std::shared_ptr<BufferAllocator> host) {
    return host;
  }

  // Queued operations: return immediately, run in order on the accelerator.
  // Pointers inside args must refer to memory the accelerator can read (its own, or staging);
  // arg structs and page tables are copied at enqueue time, so they may be temporaries.
  virtual void copy_to_device(void* dst, const void* host_src, size_t bytes) = 0;
  virtual void copy_to_host(void* host_dst, const void* src, size_t bytes) = 0;
  virtual void decode_attention(const DecodeAttentionArgs* seqs, int batch) = 0;
  virtual void score_logits(const float* q, int q_heads, const PagedKvView& kv, int64_t begin,
                            int64_t end, float scale, float* logits, int64_t stride) = 0;
  virtual void logit_merge_attention(const LogitMergeArgs& args) = 0;
  virtual void merge_partials(int n_parts, const float* const* o_parts,
                              const float* const* lse_parts, int heads, int head_dim, float* o_out,
                              float* lse_out) = 0;
  // Blocks until everything queued so far has finished; returns the accelerator-side busy
  // time since the previous synchronize, in ns (for phase breakdowns and the scheduler).
  virtual int64_t synchronize() = 0;

  // ---- Optional operations. Defaults keep every accelerator compiling and correct. ----

  // A side copy: host (staging) memory to accelerator memory on the accelerator's copy engine,
  // beside the queue, so it overlaps the compute already queued (a GPU's copy engine next to its
  // SMs). The queue's later operations do not wait for it until order_side_copies() is queued;
  // synchronize() waits for it, and its time is not busy time. HybridGen ships its CPU part this
  // way while the accelerator still attends. Default: an ordinary queued copy (correct, no
  // overlap).
  virtual void copy_to_device_async(void* dst, const void* host_src, size_t bytes) {
    copy_to_device(dst, host_src, bytes);
  }
  // Queued: the operations queued after it wait for every side copy issued before it.
  virtual void order_side_copies() {}

  // ---- Ops (core/accelerator_ops.h): policy kernels, streamed attention, host code. ----
  // Whether this accelerator runs `op` itself; the default supports none. enqueue() of an op
  // it does not support runs the op's fallback (enqueue_fallback), so a caller may just enqueue
  // and a wrapper forwards both.
  virtual bool supports(OpKind op) const { return false; }
  // Queues `op` like the operations above (host arrays of its args copied now). The default
  // runs its fallback: an accelerator that supports ops overrides this and hands the ones it
  // does not support to enqueue_fallback.
  virtual void enqueue(const AcceleratorOp& op) { enqueue_fallback(op); }

  // The GEMMs of one decoder layer around attention (core/layer_work.h), for up to `max_batch`
  // rows, weights allocated now from memory() (so they count against the capacity budget; a
  // CapacityError when they do not fit). `layer` is the layer's index in the model: its weights'
  // values come from layer_weight_seed(layer), so the layers of a stack (run --layers) hold
  // different weights. Default: this accelerator has no layer kernels.
  virtual std::unique_ptr<LayerWork> make_layer_work(const ModelPreset& model, int max_batch,
                                                     int layer) {
    throw Error("accelerator " + info().name + " cannot run a decoder layer's GEMMs",
                "use --scope attention on this accelerator");
  }

 protected:
  // An op's fallback when this accelerator does not support it: stream_attention runs as
  // decode_attention reading the host pages in place (right for an accelerator that addresses
  // host memory, without overlap); the other ops have none and throw hb::Error naming the op.
  void enqueue_fallback(const AcceleratorOp& op);
};

}  // namespace hb
