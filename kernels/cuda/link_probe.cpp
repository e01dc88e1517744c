// Link and device-memory copy bandwidth for `hybridbench probe` (kernels/backend.h). Host
// memory is the accelerator's pinned staging memory on the GPU's local NUMA node, as the
// strategies use it, so the figure is the one their transfers can reach.
#include <cuda_runtime.h>

#include <cstring>

#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_check.h"

namespace hb::cuda {

namespace {

// A stream and two events, released however the probe ends.
struct CopyQueue {
  cudaStream_t stream = nullptr;
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  ~CopyQueue() {
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    if (stream) cudaStreamDestroy(stream);
  }
  // Milliseconds of one `issue()` on the stream, between two events (GPU time, not host time).
  template <class Issue>
  double time_ms(Issue&& issue) {
    HB_CUDA_CHECK(cudaEventRecord(e0, stream), "link probe");
    issue();
    HB_CUDA_CHECK(cudaEventRecord(e1, stream), "link probe");
    HB_CUDA_CHECK(cudaEventSynchronize(e1), "link probe");
    float ms = 0;
    HB_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1), "link probe");
    return ms;
  }
};

}  // namespace

std::vector<AcceleratorLinkSamples> measure_links(int device, size_t bytes, int reps) {
  auto acc = make_cuda_accelerator(device, 0);
  const int node = acc->info().numa_node;
  Buffer host = acc->staging_memory(node)->allocate(bytes);
  Buffer a = acc->memory()->allocate(bytes), b = acc->memory()->allocate(bytes);
  std::memset(host.data(), 1, bytes);
  CopyQueue q;
  HB_CUDA_CHECK(cudaSetDevice(device), "link probe");
  HB_CUDA_CHECK(cudaStreamCreateWithFlags(&q.stream, cudaStreamNonBlocking), "link probe");
  HB_CUDA_CHECK(cudaEventCreate(&q.e0), "link probe");
  HB_CUDA_CHECK(cudaEventCreate(&q.e1), "link probe");
  const std::string what = std::to_string(bytes >> 20) + " MiB copies";
  struct Case {
    CopyLink link;
    void* dst;
    const void* src;
    cudaMemcpyKind kind;
    double bytes_moved;  // per copy: a device copy reads and writes
  };
  const Case cases[] = {
      {CopyLink::h2d, a.data(), host.data(), cudaMemcpyHostToDevice, double(bytes)},
      {CopyLink::d2h, host.data(), a.data(), cudaMemcpyDeviceToHost, double(bytes)},
      {CopyLink::hbm_copy, b.data(), a.data(), cudaMemcpyDeviceToDevice, 2.0 * double(bytes)}};
  std::vector<AcceleratorLinkSamples> out;
  for (const auto& c : cases) {
    AcceleratorLinkSamples s{c.link, node, device, {}};
    auto copy = [&] {
      HB_CUDA_CHECK(cudaMemcpyAsync(c.dst, c.src, bytes, c.kind, q.stream),
                    std::string(kCopyLinks.name(c.link)) + ", " + what);
    };
    q.time_ms(copy);  // warm-up: first-touch mappings, clocks
    for (int r = 0; r < reps; ++r) s.gbps.push_back(c.bytes_moved / (q.time_ms(copy) * 1e6));
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace hb::cuda
