#include "kernels/cpu/cpu_accelerator.h"

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "core/error.h"
#include "core/thread_pool.h"
#include "core/timer.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/merge.h"
#include "kernels/cpu/select.h"

namespace hb::cpu {

namespace {

// Accelerator memory: host memory with a hard capacity budget, so "does not fit" behaves as
// on a GPU.
class BudgetAllocator final : public BufferAllocator {
 public:
  BudgetAllocator(int64_t capacity, std::atomic<int64_t>* used) : capacity_(capacity), used_(used) {}
  Buffer allocate(size_t bytes) override {
    const int64_t b = static_cast<int64_t>(bytes);
    if (used_->load() + b > capacity_)
      throw Error("accelerator capacity exceeded: " + std::to_string(used_->load() + b) + " bytes needed, " +
                      std::to_string(capacity_) + " available",
                  "raise --accelerator-memory, or use a strategy that keeps KV in host memory", kExitFailure);
    used_->fetch_add(b);
    Buffer inner = host_allocator(location())->allocate(bytes);
    void* p = inner.data();
    auto* holder = new Buffer(std::move(inner));
    std::atomic<int64_t>* used = used_;
    return Buffer(p, bytes, location(), [holder, used, b](void*, size_t) {
      used->fetch_sub(b);
      delete holder;
    });
  }
  MemoryLocation location() const override { return MemoryLocation{MemoryKind::accelerator, 0, true}; }

 private:
  int64_t capacity_;
  std::atomic<int64_t>* used_;
};

class CpuAccelerator final : public Accelerator {
 public:
  CpuAccelerator(int64_t capacity, int threads) : pool_(threads) {
    info_.kind = "cpu";
    info_.name = "cpu-accelerator (" + std::to_string(threads) + " thread" + (threads == 1 ? "" : "s") + ")";
    info_.emulated = true;
    info_.capacity_bytes = capacity;
    info_.details = "CPU threads standing in for a GPU; figures are emulated, not GPU measurements";
    memory_ = std::make_shared<BudgetAllocator>(capacity, &used_);
    thread_ = std::thread([this] { serve(); });
  }
  ~CpuAccelerator() override {
    {
      std::lock_guard<std::mutex> lk(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

  const AcceleratorInfo& info() const override { return info_; }
  std::shared_ptr<BufferAllocator> memory() override { return memory_; }
  int64_t bytes_in_use() const override { return used_.load(); }
  std::shared_ptr<BufferAllocator> staging_memory(int numa_node) override {
    return host_allocator(MemoryLocation{MemoryKind::local_dram, numa_node, false});
  }

  void copy_to_device(void* dst, const void* src, size_t bytes) override {
    enqueue([=] { std::memcpy(dst, src, bytes); });
  }
  void copy_to_host(void* dst, const void* src, size_t bytes) override {
    enqueue([=] { std::memcpy(dst, src, bytes); });
  }
  void decode_attention(const DecodeAttentionArgs* seqs, int batch) override {
    std::vector<DecodeAttentionArgs> a(seqs, seqs + batch);
    auto tables = snapshot_views(a);
    enqueue([this, a = std::move(a), tables = std::move(tables)] {
      cpu::decode_attention(a.data(), static_cast<int>(a.size()), pool_);
    });
  }
  void score_logits(const float* q, int q_heads, const PagedKvView& kv, int64_t begin, int64_t end, float scale,
                    float* logits, int64_t stride) override {
    auto heads = std::make_shared<std::vector<KvHeadView>>(kv.heads, kv.heads + kv.kv_heads);
    PagedKvView v = kv;
    v.heads = heads->data();
    enqueue([=, this] { cpu::score_logits(q, q_heads, v, begin, end, scale, logits, stride, pool_); (void)heads; });
  }
  void logit_merge_attention(const LogitMergeArgs& args) override {
    auto heads = std::make_shared<std::vector<KvHeadView>>(args.local.heads, args.local.heads + args.local.kv_heads);
    LogitMergeArgs a = args;
    a.local.heads = heads->data();
    enqueue([=, this] { cpu::logit_merge_attention(a, pool_); (void)heads; });
  }
  void merge_partials(int n, const float* const* o_parts, const float* const* lse_parts, int heads, int head_dim,
                      float* o_out, float* lse_out) override {
    std::vector<const float*> o(o_parts, o_parts + n), l(lse_parts, lse_parts + n);
    enqueue([=] { cpu::merge_partials(n, o.data(), l.data(), heads, head_dim, o_out, lse_out); });
  }
  int64_t synchronize() override {
    std::unique_lock<std::mutex> lk(mu_);
    done_cv_.wait(lk, [&] { return queue_.empty() && !running_; });
    const int64_t busy = busy_ns_;
    busy_ns_ = 0;
    return busy;
  }

 private:
  // Page tables are copied at enqueue time: the caller may change its cache right after.
  static std::vector<std::vector<KvHeadView>> snapshot_views(std::vector<DecodeAttentionArgs>& a) {
    std::vector<std::vector<KvHeadView>> t;
    for (auto& s : a) {
      t.emplace_back(s.kv.heads, s.kv.heads + s.kv.kv_heads);
      s.kv.heads = t.back().data();
    }
    return t;
  }
  void enqueue(std::function<void()> fn) {
    {
      std::lock_guard<std::mutex> lk(mu_);
      queue_.push_back(std::move(fn));
    }
    cv_.notify_one();
  }
  void serve() {
    for (;;) {
      std::function<void()> fn;
      {
        std::unique_lock<std::mutex> lk(mu_);
        cv_.wait(lk, [&] { return stop_ || !queue_.empty(); });
        if (queue_.empty()) return;  // stop_ and drained
        fn = std::move(queue_.front());
        queue_.pop_front();
        running_ = true;
      }
      const int64_t t0 = now_ns();
      fn();
      const int64_t dt = now_ns() - t0;
      {
        std::lock_guard<std::mutex> lk(mu_);
        running_ = false;
        busy_ns_ += dt;
      }
      done_cv_.notify_all();
    }
  }

  AcceleratorInfo info_;
  std::atomic<int64_t> used_{0};
  std::shared_ptr<BufferAllocator> memory_;
  ThreadPool pool_;
  std::mutex mu_;
  std::condition_variable cv_, done_cv_;
  std::deque<std::function<void()>> queue_;
  bool running_ = false, stop_ = false;
  int64_t busy_ns_ = 0;
  std::thread thread_;
};

}  // namespace

std::unique_ptr<Accelerator> make_cpu_accelerator(int64_t capacity_bytes, int threads) {
  if (threads <= 0) threads = std::max<int>(1, static_cast<int>(allowed_cpus().size()) / 2);
  if (capacity_bytes <= 0) capacity_bytes = 2LL << 30;
  return std::make_unique<CpuAccelerator>(capacity_bytes, threads);
}

}  // namespace hb::cpu
