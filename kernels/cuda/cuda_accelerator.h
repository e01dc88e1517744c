#pragma once
// The CUDA implementation of hb::Accelerator, plus the operations only a real GPU offers to
// strategies that know they run on one (gather, Quest page metadata, the streaming offload
// path). Its ops (core/accelerator_ops.h) are every one but host_kernel (its memory is not the
// host's). Plain C++ (no CUDA headers): strategies include it under #ifdef HB_WITH_CUDA and
// reach the extras with dynamic_cast<cuda::CudaAccelerator*>(&acc).
//
// Contract additions to core/accelerator.h:
//  * KV dtype fp16 or bf16; head_dim a multiple of 8, at most 256; page blocks 16-byte aligned.
//  * Every pointer handed to a queued op (q, o, lse, logits, token lists, external logits/V)
//    must be device memory or staging memory (pinned and mapped). It is read or written when
//    the op runs, not when it is enqueued. Page tables and arg structs are copied at enqueue.
//  * All sequences of one decode_attention call share one shape (heads, head_dim, page size,
//    dtype).
#include <cstdint>
#include <functional>
#include <memory>

#include "core/accelerator.h"
#include "kernels/cuda/device_info.h"
#include "kernels/cuda/device_memory.h"

namespace hb::cuda {

class CudaAccelerator : public Accelerator {
 public:
  virtual const DeviceInfo& device() const = 0;
  // The cudaStream_t of the accelerator's queue, for code that adds its own CUDA work to it
  // (cuBLAS layer GEMMs, benchmarks).
  virtual void* stream() const = 0;
  // Where staging memory comes from: memtier's NUMA-bound allocator for the node, typically.
  virtual void set_host_allocator(HostAllocatorFactory factory) = 0;
  // Queues caller-defined CUDA work (fn receives the cudaStream_t) as one operation: it is
  // serialised with the others, named in NVTX and counted in synchronize()'s busy time.
  virtual void run_on_queue(const char* name, const std::function<void(void* stream)>& fn) = 0;

  // V rows (and K rows when k_out is set) of the given tokens of one KV head, densely
  // [count][head_dim] in the cache dtype, like cpu::gather_rows. Tokens outside the head's
  // [0, num_tokens) give zero rows.
  virtual void gather_rows(const PagedKvView& kv, int kv_head, const int32_t* tokens, int64_t count,
                           void* v_out, void* k_out) = 0;
  // Quest page metadata: elementwise min and max of the keys of each page's valid tokens,
  // fp32 [kv_head][page_stride][head_dim] (page_stride >= the most pages of any head).
  virtual void page_minmax(const PagedKvView& kv, float* kmin, float* kmax,
                           int64_t page_stride) = 0;
  // The layer's GEMMs as cuBLAS calls on the queue (layer_gemms.h), defined there.
  std::unique_ptr<LayerWork> make_layer_work(const ModelPreset& model, int max_batch,
                                             int layer) override;
};

// Throws hb::Error when the device is not usable. capacity_bytes 0 = free HBM minus 10%.
std::unique_ptr<CudaAccelerator> make_cuda_device(int device, int64_t capacity_bytes);

}  // namespace hb::cuda
