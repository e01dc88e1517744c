// hybridbench_cuda_bench: the GPU figures of scripts/device-check.sh, measured on this GPU in
// this run. HBM copy bandwidth is the yardstick; decode attention bandwidth at the
// Llama-3.1-8B shape is reported against it; then the LSE merge and pinned-memory copies.
//
//   hybridbench_cuda_bench            full table (about half a minute on an H200)
//   hybridbench_cuda_bench --probe    exit 0 if a usable GPU is present, else say why, exit 1
//   hybridbench_cuda_bench --reps N   repetitions per figure (default 30); median reported
//
// GPU times come from CUDA events recorded on the accelerator's queue around each call. The
// queue is held by a kernel spinning on a host flag until all repetitions are enqueued, so the
// host's enqueue cost (reported separately) never shows up as GPU time.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/model_presets.h"
#include "kernels/backend.h"
#include "kernels/cpu/attention.h"
#include "kernels/cuda/cuda_accelerator.h"
#include "kernels/cuda/cuda_check.h"

namespace {

using hb::cuda::CudaAccelerator;

__global__ void copy_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x)
    dst[i] = src[i];
}

__global__ void read_kernel(const uint4* __restrict__ src, size_t n, unsigned* sink) {
  unsigned acc = 0;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    const uint4 v = src[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x12345678u) *sink = acc;  // practically never: keeps the loads alive
}

__global__ void fill_kernel(uint16_t* p, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    uint64_t z = seed + 0x9e3779b97f4a7c15ull * (i + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    // fp16 in [-1, 1): sign, exponent 14 (0.5..1) or smaller, random mantissa.
    p[i] = static_cast<uint16_t>((z & 0x8000u) | (0x3800u + (z >> 20) % 0x0400u));
  }
}

// Holds the queue until the host sets *flag (all repetitions enqueued). Gives up after 10 s
// and says so in *timed_out, so a call that unexpectedly synchronises cannot hang the bench.
__global__ void spin_until(volatile int* flag, int* timed_out) {
  uint64_t t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  while (*flag == 0) {
    __nanosleep(1000);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    if (t - t0 > 10000000000ull) {
      *timed_out = 1;
      return;
    }
  }
}

struct Row {
  std::string what, config;
  double us = 0, gbs = 0, pct = -1;
  double host_us = -1;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Times `reps` calls of `op` on `stream`: GPU time per call (median) and host time per call.
struct Timing {
  double gpu_us, host_us;
};
Timing time_on_queue(cudaStream_t stream, int reps, const std::function<void()>& op) {
  op();  // warm-up (first-launch costs, page-table upload)
  HB_CUDA_CHECK(cudaStreamSynchronize(stream), "warm-up");
  int* flag = nullptr;
  HB_CUDA_CHECK(
      cudaHostAlloc(reinterpret_cast<void**>(&flag), 2 * sizeof(int), cudaHostAllocMapped),
      "spin flag");
  flag[0] = flag[1] = 0;
  std::vector<cudaEvent_t> ev(reps + 1);
  for (auto& e : ev) HB_CUDA_CHECK(cudaEventCreate(&e), "timing event");
  spin_until<<<1, 1, 0, stream>>>(flag, flag + 1);
  HB_CUDA_CHECK_LAUNCH("spin", "");
  const auto t0 = std::chrono::steady_clock::now();
  HB_CUDA_CHECK(cudaEventRecord(ev[0], stream), "timing");
  for (int i = 0; i < reps; ++i) {
    op();
    HB_CUDA_CHECK(cudaEventRecord(ev[i + 1], stream), "timing");
  }
  const double host_us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() /
      reps;
  *reinterpret_cast<volatile int*>(flag) = 1;
  HB_CUDA_CHECK(cudaStreamSynchronize(stream), "timed calls");
  if (reinterpret_cast<volatile int*>(flag)[1])
    std::fprintf(
        stderr, "warning: enqueueing %d calls took over 10 s; GPU times include idle gaps\n", reps);
  std::vector<double> us;
  for (int i = 0; i < reps; ++i) {
    float ms = 0;
    HB_CUDA_CHECK(cudaEventElapsedTime(&ms, ev[i], ev[i + 1]), "timing");
    us.push_back(ms * 1e3);
  }
  for (auto& e : ev) cudaEventDestroy(e);
  cudaFreeHost(flag);
  return {median(us), host_us};
}

std::string tokens_str(int64_t t) {
  return t % 1024 == 0 ? std::to_string(t / 1024) + "K" : std::to_string(t);
}

void print_rows(const std::vector<Row>& rows) {
  std::printf("\n| %-34s | %-30s | %12s | %12s | %9s | %12s |\n", "measurement", "config",
              "GPU us (med)", "GB/s", "% HBM cp", "host us/call");
  std::printf("|%s|%s|%s|%s|%s|%s|\n", std::string(36, '-').c_str(), std::string(32, '-').c_str(),
              std::string(14, '-').c_str(), std::string(14, '-').c_str(),
              std::string(11, '-').c_str(), std::string(14, '-').c_str());
  for (const Row& r : rows) {
    char pct[16] = "", gbs[16] = "", host[16] = "";
    if (r.pct >= 0) std::snprintf(pct, sizeof pct, "%.1f%%", r.pct);
    if (r.gbs > 0) std::snprintf(gbs, sizeof gbs, "%.0f", r.gbs);
    if (r.host_us >= 0) std::snprintf(host, sizeof host, "%.1f", r.host_us);
    std::printf("| %-34s | %-30s | %12.2f | %12s | %9s | %12s |\n", r.what.c_str(),
                r.config.c_str(), r.us, gbs, pct, host);
  }
}

// HBM copy (cudaMemcpy D2D and a 16-byte copy kernel) and read; returns the copy bandwidth
// (GB/s, the better of the two) every other figure is reported against.
double measure_hbm(const hb::cuda::DeviceInfo& dev, cudaStream_t stream, int reps,
                   std::vector<Row>& rows) {
  const int grid = dev.sm_count * 8;
  const size_t bytes =
      std::min<size_t>(size_t{2} << 30, static_cast<size_t>(dev.free_bytes) / 4) & ~size_t{4095};
  void *a = nullptr, *b = nullptr;
  unsigned* sink = nullptr;
  HB_CUDA_CHECK(cudaMalloc(&a, bytes), "HBM copy source");
  HB_CUDA_CHECK(cudaMalloc(&b, bytes), "HBM copy destination");
  HB_CUDA_CHECK(cudaMalloc(&sink, sizeof(unsigned)), "sink");
  HB_CUDA_CHECK(cudaMemsetAsync(a, 1, bytes, stream), "HBM copy source init");
  const std::string cfg = std::to_string(bytes >> 20) + " MiB";
  const size_t first = rows.size();
  auto t = time_on_queue(stream, reps, [&] {
    HB_CUDA_CHECK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, stream), "D2D");
  });
  const double memcpy_gbs = 2.0 * bytes / (t.gpu_us * 1e3);
  rows.push_back({"HBM copy, cudaMemcpy D2D (rd+wr)", cfg, t.gpu_us, memcpy_gbs, -1, -1});
  t = time_on_queue(stream, reps, [&] {
    copy_kernel<<<grid, 256, 0, stream>>>(static_cast<const uint4*>(a), static_cast<uint4*>(b),
                                          bytes / 16);
  });
  const double kernel_gbs = 2.0 * bytes / (t.gpu_us * 1e3);
  rows.push_back({"HBM copy, 16B copy kernel (rd+wr)", cfg, t.gpu_us, kernel_gbs, -1, -1});
  const double hbm_copy = std::max(memcpy_gbs, kernel_gbs);
  t = time_on_queue(stream, reps, [&] {
    read_kernel<<<grid, 256, 0, stream>>>(static_cast<const uint4*>(a), bytes / 16, sink);
  });
  rows.push_back({"HBM read, 16B read kernel", cfg, t.gpu_us, bytes / (t.gpu_us * 1e3), -1, -1});
  for (size_t i = first; i < rows.size(); ++i) rows[i].pct = 100.0 * rows[i].gbs / hbm_copy;
  cudaFree(a);
  cudaFree(b);
  cudaFree(sink);
  return hbm_copy;
}

// Decode attention at the Llama-3.1-8B shape (32 q heads, 8 KV heads, d 128, fp16) over
// `tokens` random tokens per sequence: one row, its bandwidth against `hbm_copy`.
Row decode_row(CudaAccelerator& acc, int64_t tokens, int batch, int reps, double hbm_copy) {
  const auto& dev = acc.device();
  auto stream = static_cast<cudaStream_t>(acc.stream());
  const hb::AttentionShape shape = hb::find_model_preset("llama-3.1-8b").shape;
  const int P = hb::kDefaultPageTokens, H = shape.kv_heads, D = shape.head_dim;
  const size_t block = static_cast<size_t>(P) * D * 2;
  const int64_t pages = tokens / P;
  hb::Buffer kv = acc.memory()->allocate(static_cast<size_t>(batch) * pages * H * 2 * block);
  fill_kernel<<<dev.sm_count * 8, 256, 0, stream>>>(kv.as<uint16_t>(), kv.size() / 2,
                                                    1234 + tokens + batch);
  HB_CUDA_CHECK_LAUNCH("KV fill", "");
  hb::Buffer qbuf = acc.memory()->allocate(static_cast<size_t>(batch) * shape.q_heads * D * 4);
  hb::Buffer obuf =
      acc.memory()->allocate(static_cast<size_t>(batch) * shape.q_heads * (D + 1) * 4);
  HB_CUDA_CHECK(cudaMemsetAsync(qbuf.data(), 0, qbuf.size(), stream), "q");
  // Page i of every head next to each other, per sequence, as PagedKvCache appends them.
  std::vector<std::vector<hb::PageRef>> tables(static_cast<size_t>(batch) * H);
  std::vector<hb::KvHeadView> heads(static_cast<size_t>(batch) * H);
  std::vector<hb::DecodeAttentionArgs> args(batch);
  auto* base = kv.as<std::byte>();
  for (int b = 0; b < batch; ++b) {
    for (int h = 0; h < H; ++h) {
      auto& t = tables[static_cast<size_t>(b) * H + h];
      for (int64_t i = 0; i < pages; ++i) {
        std::byte* k = base + ((static_cast<size_t>(b) * pages + i) * H + h) * 2 * block;
        t.push_back(hb::PageRef{k, k + block});
      }
      heads[static_cast<size_t>(b) * H + h] = hb::KvHeadView{t.data(), tokens};
    }
    auto& a = args[b];
    a.q = qbuf.as<float>() + static_cast<size_t>(b) * shape.q_heads * D;
    a.kv = hb::PagedKvView{H, D, P, hb::DType::f16, heads.data() + static_cast<size_t>(b) * H};
    a.q_heads = shape.q_heads;
    a.o = obuf.as<float>() + static_cast<size_t>(b) * shape.q_heads * D;
    a.lse = obuf.as<float>() + static_cast<size_t>(batch) * shape.q_heads * D +
            static_cast<size_t>(b) * shape.q_heads;
  }
  const auto t = time_on_queue(stream, reps, [&] { acc.decode_attention(args.data(), batch); });
  acc.synchronize();
  const double bytes = static_cast<double>(batch) * tokens * H * D * 2 * 2;
  Row r{"decode attention (K+V bytes read)",
        tokens_str(tokens) + " tokens, batch " + std::to_string(batch),
        t.gpu_us,
        bytes / (t.gpu_us * 1e3),
        0,
        t.host_us};
  r.pct = 100.0 * r.gbs / hbm_copy;
  return r;
}

// The LSE merge of two partial states (GPU part + CPU part) at batch 1, 16 and 64; returns
// whether every one took under 5 us.
bool measure_merge(CudaAccelerator& acc, int reps, std::vector<Row>& rows) {
  auto stream = static_cast<cudaStream_t>(acc.stream());
  const hb::AttentionShape shape = hb::find_model_preset("llama-3.1-8b").shape;
  const int D = shape.head_dim;
  bool merge_ok = true;
  for (int batch : {1, 16, 64}) {
    const int heads = batch * shape.q_heads;
    hb::Buffer buf = acc.memory()->allocate(static_cast<size_t>(3) * heads * (D + 1) * 4);
    HB_CUDA_CHECK(cudaMemsetAsync(buf.data(), 0, buf.size(), stream), "merge inputs");
    float* o0 = buf.as<float>();
    float* o1 = o0 + static_cast<size_t>(heads) * D;
    float* out = o1 + static_cast<size_t>(heads) * D;
    float* l0 = out + static_cast<size_t>(heads) * D;
    float* l1 = l0 + heads;
    float* lout = l1 + heads;
    const float* o_parts[2] = {o0, o1};
    const float* l_parts[2] = {l0, l1};
    const auto t = time_on_queue(
        stream, reps, [&] { acc.merge_partials(2, o_parts, l_parts, heads, D, out, lout); });
    acc.synchronize();
    if (t.gpu_us >= 5.0) merge_ok = false;
    rows.push_back(
        {"LSE merge, 2 partials",
         "batch " + std::to_string(batch) + " (" + std::to_string(heads) + " heads x128)", t.gpu_us,
         3.0 * heads * (D + 1) * 4 / (t.gpu_us * 1e3), -1, t.host_us});
  }
  return merge_ok;
}

// Pinned host <-> device copies of 256 MiB from the GPU's own NUMA node.
void measure_pinned(CudaAccelerator& acc, int reps, std::vector<Row>& rows) {
  const auto& dev = acc.device();
  auto stream = static_cast<cudaStream_t>(acc.stream());
  const size_t bytes = size_t{256} << 20;
  hb::Buffer host = acc.staging_memory(dev.numa_node)->allocate(bytes);
  hb::Buffer devb = acc.memory()->allocate(bytes);
  std::memset(host.data(), 1, bytes);
  auto t = time_on_queue(stream, std::min(reps, 10), [&] {
    HB_CUDA_CHECK(cudaMemcpyAsync(devb.data(), host.data(), bytes, cudaMemcpyHostToDevice, stream),
                  "H2D");
  });
  rows.push_back({"pinned H2D", "256 MiB, NUMA node " + std::to_string(dev.numa_node), t.gpu_us,
                  bytes / (t.gpu_us * 1e3), -1, -1});
  t = time_on_queue(stream, std::min(reps, 10), [&] {
    HB_CUDA_CHECK(cudaMemcpyAsync(host.data(), devb.data(), bytes, cudaMemcpyDeviceToHost, stream),
                  "D2H");
  });
  rows.push_back({"pinned D2H", "256 MiB, NUMA node " + std::to_string(dev.numa_node), t.gpu_us,
                  bytes / (t.gpu_us * 1e3), -1, -1});
}

int run(int reps) {
  std::unique_ptr<CudaAccelerator> acc = hb::cuda::make_cuda_device(0, 0);
  const auto& dev = acc->device();
  auto stream = static_cast<cudaStream_t>(acc->stream());
  std::printf("hybridbench_cuda_bench on %s: %s\n", dev.name.c_str(), dev.summary().c_str());
  std::printf("(medians of %d calls; GPU time by CUDA events on the accelerator queue)\n", reps);
  std::vector<Row> rows;
  const double hbm_copy = measure_hbm(dev, stream, reps, rows);
  bool attn_ok = true;
  for (int64_t tokens : {int64_t{8192}, int64_t{32768}, int64_t{131072}})
    for (int batch : {1, 16}) {
      rows.push_back(decode_row(*acc, tokens, batch, reps, hbm_copy));
      if (tokens >= 32768 && rows.back().pct < 85.0) attn_ok = false;
    }
  const bool merge_ok = measure_merge(*acc, reps, rows);
  measure_pinned(*acc, reps, rows);
  print_rows(rows);
  std::printf(
      "\ntargets: decode attention >= 85%% of HBM copy at >= 32K tokens: %s; merge < 5 us for "
      "batch <= 64: %s\n",
      attn_ok ? "MET" : "NOT MET", merge_ok ? "MET" : "NOT MET");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 30;
  bool probe = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--probe")) {
      probe = true;
    } else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) {
      reps = std::max(3, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: %s [--probe] [--reps N]\n", argv[0]);
      return 2;
    }
  }
  std::string why;
  if (!hb::cuda_available(&why)) {
    std::fprintf(stderr, "hybridbench_cuda_bench: no usable GPU: %s\n", why.c_str());
    return 1;
  }
  try {
    if (probe) {
      auto acc = hb::cuda::make_cuda_device(0, 0);
      std::printf("GPU 0: %s: %s\n", acc->device().name.c_str(), acc->device().summary().c_str());
      return 0;
    }
    return run(reps);
  } catch (const hb::Error& e) {
    std::fprintf(stderr, "hybridbench_cuda_bench: %s\n", e.what());
    return e.exit_code() ? e.exit_code() : 1;
  }
}
