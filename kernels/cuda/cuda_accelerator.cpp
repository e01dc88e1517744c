// The CUDA accelerator: lifecycle, memory, copies, busy-time accounting and synchronize.
// The attention operations are in attention_ops.cpp and streaming.cpp.
#include <cmath>
#include <string>

#include "core/error.h"
#include "kernels/cuda/accelerator_impl.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_check.h"

namespace hb::cuda {

cudaError_t probe_kernel_image();  // decode_attention.cu

namespace {
constexpr size_t kMaxRecentOps = 32;
constexpr size_t kFoldSpansAt = 2048;  // bound the event list when a caller rarely synchronizes
}  // namespace

CudaAcceleratorImpl::Op::Op(CudaAcceleratorImpl& acc, const char* name, Start start)
    : acc_(acc), lock_(acc.mu_), range_(name) {
  acc_.ctx_->activate();
  acc_.tables_.begin_op();
  if (acc_.spans_.size() >= kFoldSpansAt) acc_.fold_finished_spans();
  if (acc_.recent_ops_.size() >= kMaxRecentOps) acc_.recent_ops_.erase(acc_.recent_ops_.begin());
  acc_.recent_ops_.emplace_back(name);
  if (start == Start::now)
    gpu_begins();
  else
    acc_.ring_.hold();
}

void CudaAcceleratorImpl::Op::gpu_begins() {
  if (start_) return;
  cudaEvent_t e = acc_.take_event();
  if (const cudaError_t err = cudaEventRecord(e, acc_.ctx_->stream); err != cudaSuccess) {
    acc_.spare_events_.push_back(e);
    HB_CUDA_CHECK(err, acc_.recent_ops_.back());
  }
  start_ = e;
  acc_.ring_.release(acc_.ctx_->stream);
}

CudaAcceleratorImpl::Op::~Op() {
  if (!start_) {
    // No GPU work (an early return or a throw): queue any held uploads anyway, since the page
    // table mirrors already count them as done.
    try {
      acc_.ring_.release(acc_.ctx_->stream);
    } catch (...) {
      cudaGetLastError();
    }
    return;
  }
  cudaEvent_t end = nullptr;
  try {
    end = acc_.take_event();
  } catch (...) {
    acc_.spare_events_.push_back(start_);
    return;  // no event: this op's time goes unaccounted rather than throwing from a destructor
  }
  if (cudaEventRecord(end, acc_.ctx_->stream) == cudaSuccess) {
    acc_.spans_.emplace_back(start_, end);
  } else {
    cudaGetLastError();
    acc_.spare_events_.push_back(start_);
    acc_.spare_events_.push_back(end);
  }
}

cudaEvent_t CudaAcceleratorImpl::take_event() {
  if (!spare_events_.empty()) {
    cudaEvent_t e = spare_events_.back();
    spare_events_.pop_back();
    return e;
  }
  cudaEvent_t e = nullptr;
  HB_CUDA_CHECK(cudaEventCreate(&e), "busy-time event");
  return e;
}

void CudaAcceleratorImpl::fold_finished_spans() {
  size_t kept = 0;
  for (auto& [s, e] : spans_) {
    float ms = 0;
    if (cudaEventQuery(e) == cudaSuccess && cudaEventElapsedTime(&ms, s, e) == cudaSuccess) {
      folded_ns_ += static_cast<int64_t>(std::llround(ms * 1e6));
      spare_events_.push_back(s);
      spare_events_.push_back(e);
    } else {
      spans_[kept++] = {s, e};
    }
  }
  cudaGetLastError();
  spans_.resize(kept);
}

CudaAcceleratorImpl::CudaAcceleratorImpl(int device, int64_t capacity)
    : ctx_(std::make_shared<DeviceContext>(device)), tables_(*ctx_) {
  const DeviceInfo& d = ctx_->info;
  if (const cudaError_t e = probe_kernel_image(); e != cudaSuccess) {
    cudaGetLastError();
    throw Error("GPU " + std::to_string(device) + " (" + d.name + ", compute capability " +
                    d.compute_capability() +
                    ") cannot run this build's kernels: " + cudaGetErrorString(e),
                "rebuild with -DCMAKE_CUDA_ARCHITECTURES=<this GPU's arch>, e.g. 90 for Hopper",
                kExitFailure);
  }
  // Checked once here rather than at every op that hands a staging pointer to a kernel.
  if (const std::string why = unsupported_reason(d); !why.empty())
    throw Error(why, "update the NVIDIA driver, or use --accelerator cpu", kExitFailure);
  if (capacity <= 0) capacity = static_cast<int64_t>(static_cast<double>(d.free_bytes) * 0.9);
  info_.kind = AcceleratorKind::cuda;
  info_.name = d.name;
  info_.emulated = false;
  info_.capacity_bytes = capacity;
  ctx_->capacity = capacity;
  info_.device = device;
  info_.numa_node = d.numa_node;
  info_.details = d.summary();
  memory_ = make_device_allocator(ctx_, capacity);
  host_factory_ = [](int node) {
    return host_allocator(MemoryLocation{MemoryKind::local_dram, node, false});
  };
  for (cudaEvent_t* e :
       {&stream_ready_, &chunk_copied_[0], &chunk_copied_[1], &chunk_used_[0], &chunk_used_[1]})
    HB_CUDA_CHECK(cudaEventCreateWithFlags(e, cudaEventDisableTiming), "streaming events");
}

CudaAcceleratorImpl::~CudaAcceleratorImpl() {
  ctx_->activate();
  cudaStreamSynchronize(ctx_->stream);
  cudaStreamSynchronize(ctx_->copy_stream);
  for (auto& [s, e] : spans_) {
    cudaEventDestroy(s);
    cudaEventDestroy(e);
  }
  for (cudaEvent_t e : spare_events_) cudaEventDestroy(e);
  for (cudaEvent_t e :
       {stream_ready_, chunk_copied_[0], chunk_copied_[1], chunk_used_[0], chunk_used_[1]})
    if (e) cudaEventDestroy(e);
  cudaGetLastError();
}

std::shared_ptr<BufferAllocator> CudaAcceleratorImpl::staging_memory(int numa_node) {
  std::lock_guard<std::mutex> lk(mu_);
  return make_pinned_allocator(ctx_, host_factory_(numa_node));
}

void CudaAcceleratorImpl::set_host_allocator(HostAllocatorFactory factory) {
  std::lock_guard<std::mutex> lk(mu_);
  if (factory) host_factory_ = std::move(factory);
}

void CudaAcceleratorImpl::run_on_queue(const char* name,
                                       const std::function<void(void* stream)>& fn) {
  Op op(*this, name);
  op.gpu_begins();
  fn(ctx_->stream);
}

void CudaAcceleratorImpl::copy_to_device(void* dst, const void* src, size_t bytes) {
  Op op(*this, "hb.cuda.copy_to_device", Op::Start::deferred);
  if (bytes == 0) return;
  op.gpu_begins();
  HB_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, ctx_->stream),
                "copy_to_device, " + std::to_string(bytes) + " bytes");
}

void CudaAcceleratorImpl::copy_to_host(void* dst, const void* src, size_t bytes) {
  Op op(*this, "hb.cuda.copy_to_host", Op::Start::deferred);
  if (bytes == 0) return;
  op.gpu_begins();
  HB_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, ctx_->stream),
                "copy_to_host, " + std::to_string(bytes) + " bytes");
}

int64_t CudaAcceleratorImpl::synchronize() {
  std::lock_guard<std::mutex> lk(mu_);
  HB_NVTX_RANGE("hb.cuda.synchronize");
  ctx_->activate();
  cudaError_t err = cudaStreamSynchronize(ctx_->stream);
  if (err == cudaSuccess) err = cudaStreamSynchronize(ctx_->copy_stream);
  if (err != cudaSuccess) {
    std::string ops;
    for (const auto& o : recent_ops_) ops += (ops.empty() ? "" : ", ") + o;
    recent_ops_.clear();
    HB_CUDA_CHECK(err, "synchronize; ops queued since the last one: " + ops);
  }
  int64_t ns = folded_ns_;
  for (auto& [s, e] : spans_) {
    float ms = 0;
    if (cudaEventElapsedTime(&ms, s, e) == cudaSuccess)
      ns += static_cast<int64_t>(std::llround(ms * 1e6));
    spare_events_.push_back(s);
    spare_events_.push_back(e);
  }
  cudaGetLastError();
  spans_.clear();
  folded_ns_ = 0;
  recent_ops_.clear();
  ring_.reset();
  return ns;
}

std::unique_ptr<CudaAccelerator> make_cuda_device(int device, int64_t capacity_bytes) {
  std::string why;
  if (!device_usable(device, &why))
    throw Error("CUDA device " + std::to_string(device) + " is not usable: " + why,
                "pick another --device, or use --accelerator cpu", kExitUsage);
  return std::make_unique<CudaAcceleratorImpl>(device, capacity_bytes);
}

std::unique_ptr<Accelerator> make_cuda_accelerator(int device, int64_t capacity_bytes) {
  return make_cuda_device(device, capacity_bytes);
}

}  // namespace hb::cuda
