#pragma once
// Internal: the CUDA accelerator's state, shared by the files that implement its operations
// (cuda_accelerator.cpp: lifecycle, memory, copies, synchronize; attention_ops.cpp: the
// attention kernels; streaming.cpp: the offload streaming path).
#include <cuda_runtime.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/select.h"
#include "kernels/cuda/cuda_accelerator.h"
#include "kernels/cuda/device_context.h"
#include "kernels/cuda/kernel_args.h"
#include "kernels/cuda/page_table_cache.h"
#include "kernels/cuda/upload_ring.h"
#include "kernels/nvtx.h"

namespace hb::cuda {

KvType kv_type(DType t);  // the kernels' name for a KV dtype

// The uniform shape of one launch's sequences, validated.
struct LaunchShape {
  int q_heads = 0, kv_heads = 0, head_dim = 0, page_tokens = 0, group = 0;
  KvType dtype = KvType::f16;
  std::string describe() const;  // "batch 16, 32q/8kv x128 fp16, page 16"
};

class CudaAcceleratorImpl final : public CudaAccelerator {
 public:
  CudaAcceleratorImpl(int device, int64_t capacity_bytes);
  ~CudaAcceleratorImpl() override;

  const AcceleratorInfo& info() const override { return info_; }
  std::shared_ptr<BufferAllocator> memory() override { return memory_; }
  int64_t bytes_in_use() const override { return ctx_->bytes_in_use(); }
  std::shared_ptr<BufferAllocator> staging_memory(int numa_node) override;
  std::shared_ptr<BufferAllocator> staging_over(std::shared_ptr<BufferAllocator> host) override {
    return make_pinned_allocator(ctx_, std::move(host));
  }
  void copy_to_device(void* dst, const void* host_src, size_t bytes) override;
  void copy_to_host(void* host_dst, const void* src, size_t bytes) override;
  void decode_attention(const DecodeAttentionArgs* seqs, int batch) override;
  void score_logits(const float* q, int q_heads, const PagedKvView& kv, int64_t begin, int64_t end,
                    float scale, float* logits, int64_t stride) override;
  void logit_merge_attention(const LogitMergeArgs& args) override;
  void merge_partials(int n_parts, const float* const* o_parts, const float* const* lse_parts,
                      int heads, int head_dim, float* o_out, float* lse_out) override;
  int64_t synchronize() override;

  const DeviceInfo& device() const override { return ctx_->info; }
  void* stream() const override { return ctx_->stream; }
  void set_host_allocator(HostAllocatorFactory factory) override;
  void run_on_queue(const char* name, const std::function<void(void* stream)>& fn) override;
  void gather_rows(const PagedKvView& kv, int kv_head, const int32_t* tokens, int64_t count,
                   void* v_out, void* k_out) override;
  void page_minmax(const PagedKvView& kv, float* kmin, float* kmax, int64_t page_stride) override;
  // side_copies.cpp
  void copy_to_device_async(void* dst, const void* host_src, size_t bytes) override;
  void order_side_copies() override;
  // The ops (core/accelerator_ops.h): all but host_kernel, dispatched by enqueue
  // (policy_ops.cpp) to the methods below.
  bool supports(OpKind op) const override { return op != OpKind::host_kernel; }
  void enqueue(const AcceleratorOp& op) override;
  // streaming.cpp
  void stream_attention(const DecodeAttentionArgs* seqs, int batch, int64_t chunk_tokens);
  struct StreamCall;  // one call's plan and scratch (streaming.cpp's helpers name it)
  // policy_ops.cpp
  void heavy_hitter_update(const HeavyHitterArgs& args);
  void fold_page_bounds(const PageBoundFoldArgs& args);
  void score_page_bounds(const PageBoundScoreArgs& args);
  void topk_rows(const TopkRowsArgs& args);
  void group_max_rows(const GroupMaxArgs& args);
  void project_rows(const ProjectRowsArgs& args);
  void rows_to_pages(const RowsToPagesArgs& args);

 private:
  // Brackets one public operation: serialises callers, selects the device, opens an NVTX
  // range and records busy-time events around the queued work. The start event is recorded by
  // Op::gpu_begins(), which an op calls right before its first kernel or copy (after
  // validation and descriptor building; ring uploads are held until then), so host time is
  // not counted as accelerator busy time (Start::deferred; see Op).
  class Op;

  // attention_ops.cpp
  LaunchShape check_shape(const DecodeAttentionArgs* seqs, int batch, const char* op) const;
  int resident_ctas(const LaunchShape& s, bool with_v) const;
  DecodeLaunch decode_launch(const LaunchShape& s, int batch, bool with_v) const;
  // logit_merge_attention's local partials: the decode kernel over the resident KV, all tokens
  // of each head; appends their descriptors to `heads`, sets the shape, plans the splits.
  DecodeLaunch local_merge_launch(const LogitMergeArgs& args, std::vector<HeadDesc>& heads,
                                  LaunchShape& s);
  // Uploads `bytes` of host descriptors into fresh scratch and returns it.
  Scratch upload_scratch(const void* host, size_t bytes, const char* what);
  // streaming.cpp: the steps of stream_attention.
  void plan_stream_launch(StreamCall& c, const std::vector<SeqDesc>& seq_desc);
  void reserve_stream_buffers(StreamCall& c);
  void queue_stream_chunk(StreamCall& c, int64_t ci);  // copies and attention of chunk ci
  void queue_empty_stream(StreamCall& c);              // neutral partials: nothing to attend

  std::shared_ptr<DeviceContext> ctx_;
  AcceleratorInfo info_;
  std::shared_ptr<BufferAllocator> memory_;
  HostAllocatorFactory host_factory_;
  UploadRing ring_;
  PageTableCache tables_;
  std::mutex mu_;
  // Busy-time accounting: (start, end) event pairs of the ops since the last synchronize.
  std::vector<std::pair<cudaEvent_t, cudaEvent_t>> spans_;
  std::vector<cudaEvent_t> spare_events_;
  std::vector<std::string> recent_ops_;  // named in errors found at synchronize
  int64_t folded_ns_ = 0;                // busy time of spans already recycled before synchronize
  cudaEvent_t take_event();
  void fold_finished_spans();
  // Side copies (side_copies.cpp): the last one's completion on the copy stream, and whether
  // the queue has yet to wait for it.
  struct EventDeleter {
    void operator()(cudaEvent_t e) const { cudaEventDestroy(e); }
  };
  std::unique_ptr<CUevent_st, EventDeleter> side_done_;
  bool side_pending_ = false;
  // Streaming path: two chunk buffers in accelerator memory (grown on demand) and its events.
  Buffer stream_buf_;
  cudaEvent_t stream_ready_ = nullptr, chunk_copied_[2] = {nullptr, nullptr},
              chunk_used_[2] = {nullptr, nullptr};
};

}  // namespace hb::cuda

namespace hb::cuda {

class CudaAcceleratorImpl::Op {
 public:
  // `now`: the start event is recorded here (for ops whose first statement queues GPU work);
  // `deferred`: ring uploads are held and the start is recorded by gpu_begins(), which the op
  // must call before its first kernel or copy.
  enum class Start { now, deferred };
  Op(CudaAcceleratorImpl& acc, const char* name, Start start = Start::now);
  ~Op();
  Op(const Op&) = delete;
  Op& operator=(const Op&) = delete;
  // Records the start event and queues the held uploads; idempotent.
  void gpu_begins();

 private:
  CudaAcceleratorImpl& acc_;
  std::lock_guard<std::mutex> lock_;
  NvtxRange range_;
  cudaEvent_t start_ = nullptr;
};

}  // namespace hb::cuda
