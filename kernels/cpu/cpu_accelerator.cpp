#include "kernels/cpu/cpu_accelerator.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <variant>

#include "core/error.h"
#include "core/thread_pool.h"
#include "core/timer.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/chunk_stream.h"
#include "kernels/cpu/cpu_layer_work.h"
#include "kernels/cpu/merge.h"
#include "kernels/cpu/policy_ops.h"
#include "kernels/cpu/select.h"

namespace hb::cpu {

namespace {

// Accelerator memory: host memory with a hard capacity budget, so "does not fit" behaves as
// on a GPU.
class BudgetAllocator final : public BufferAllocator {
 public:
  BudgetAllocator(int64_t capacity, std::atomic<int64_t>* used)
      : capacity_(capacity), used_(used) {}
  Buffer allocate(size_t bytes) override {
    check(bytes);
    Buffer inner = host_allocator(location())->allocate(bytes);
    void* p = inner.data();
    // An empty allocation has no memory to release: a Buffer without data never runs its
    // release, so wrapping it would leak the holder (found by the ASan build).
    if (!p) return inner;
    const int64_t b = static_cast<int64_t>(bytes);
    used_->fetch_add(b);
    auto* holder = new Buffer(std::move(inner));
    std::atomic<int64_t>* used = used_;
    return Buffer(p, bytes, location(), [holder, used, b](void*, size_t) {
      used->fetch_sub(b);
      delete holder;
    });
  }
  // Charges `bytes` against the budget, as allocate() would, without memory: the token's data
  // is not memory and must never be read (shared layer weights, AcceleratorOptions).
  Buffer reserve(size_t bytes) {
    check(bytes);
    static std::byte token;
    if (bytes == 0) return {};
    const int64_t b = static_cast<int64_t>(bytes);
    used_->fetch_add(b);
    std::atomic<int64_t>* used = used_;
    return Buffer(&token, bytes, location(), [used, b](void*, size_t) { used->fetch_sub(b); });
  }
  MemoryLocation location() const override {
    return MemoryLocation{MemoryKind::accelerator, 0, true};
  }
  bool zeroes_memory() const override { return true; }  // host_allocator's blocks

 private:
  void check(size_t bytes) const {
    const int64_t b = static_cast<int64_t>(bytes);
    if (used_->load() + b > capacity_)
      throw CapacityError(
          "accelerator capacity exceeded: " + std::to_string(used_->load() + b) +
              " bytes needed, " + std::to_string(capacity_) + " available",
          "raise --accelerator-memory, or use a strategy that keeps KV in host memory",
          kExitFailure);
  }

  int64_t capacity_;
  std::atomic<int64_t>* used_;
};

// Layer weights at least this large are one shared copy even in measured runs: no CPU's
// last-level cache that one thread reaches holds them (AMD's stacked-cache CCDs hold 96 MiB), so
// nothing is found hot, and every strategy of a group then streams the same pages. One copy per
// strategy let where each 0.4 GB copy landed (fresh pages or recycled ones, through a hypervisor)
// move a strategy's step time by 15-30% between its first load and its replay, which
// paired rounds cannot cancel. Smaller weights keep a copy each, so they cannot stay cached
// across the strategies stepping in turn.
constexpr int64_t kSharedWeightsFromBytes = int64_t{256} << 20;

class CpuAccelerator final : public Accelerator {
 public:
  CpuAccelerator(int64_t capacity, int threads, bool run_layer_gemms)
      : run_layer_gemms_(run_layer_gemms), pool_(threads, "--accelerator-threads") {
    info_.kind = AcceleratorKind::cpu;
    info_.name =
        "cpu-accelerator (" + std::to_string(threads) + " thread" + (threads == 1 ? "" : "s") + ")";
    info_.emulated = true;
    info_.capacity_bytes = capacity;
    info_.details = "CPU threads standing in for a GPU; figures are emulated, not GPU measurements";
    memory_ = std::make_shared<BudgetAllocator>(capacity, &used_);
    // A refused thread is an hb::Error naming the option (start_thread). The destructor does not
    // run for a half-built object, and a joinable std::thread destroyed while the exception
    // unwinds would call std::terminate: stop the queue thread before passing the error on.
    thread_ = start_thread([this] { serve(); }, "the cpu accelerator's queue thread",
                           "--accelerator-threads");
    try {
      copy_thread_ = start_thread([this] { serve_copies(); }, "the cpu accelerator's copy thread",
                                  "--accelerator-threads");
    } catch (...) {
      stop_queue_thread();
      throw;
    }
  }
  ~CpuAccelerator() override {
    stop_queue_thread();
    {
      std::lock_guard<std::mutex> lk(copy_mu_);
      copy_stop_ = true;
    }
    copy_cv_.notify_all();
    copy_thread_.join();
  }

  void stop_queue_thread() {
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
    push([=] { std::memcpy(dst, src, bytes); });
  }
  // Side copies run on the copy thread (the copy engine); the queue waits for them only at
  // order_side_copies(), and that wait is not busy time.
  void copy_to_device_async(void* dst, const void* src, size_t bytes) override {
    {
      std::lock_guard<std::mutex> lk(copy_mu_);
      ++side_issued_;
      copy_queue_.push_back([=, this] {
        std::memcpy(dst, src, bytes);
        {
          std::lock_guard<std::mutex> done(side_mu_);
          ++side_done_;
        }
        side_cv_.notify_all();
      });
    }
    copy_cv_.notify_one();
  }
  void order_side_copies() override {
    int64_t issued = 0;
    {
      std::lock_guard<std::mutex> lk(copy_mu_);
      if (side_issued_ == side_ordered_) return;  // nothing new to wait for
      issued = side_ordered_ = side_issued_;
    }
    push([this, issued] {
      const int64_t t0 = now_ns();
      std::unique_lock<std::mutex> lk(side_mu_);
      side_cv_.wait(lk, [&] { return side_done_ >= issued; });
      idle_ns_ += now_ns() - t0;  // waiting on the copy engine, not computing
    });
  }
  void copy_to_host(void* dst, const void* src, size_t bytes) override {
    push([=] { std::memcpy(dst, src, bytes); });
  }
  void decode_attention(const DecodeAttentionArgs* seqs, int batch) override {
    std::vector<DecodeAttentionArgs> a(seqs, seqs + batch);
    auto tables = snapshot_views(a);
    push([this, a = std::move(a), tables = std::move(tables)] {
      cpu::decode_attention(a.data(), static_cast<int>(a.size()), pool_);
    });
  }
  void score_logits(const float* q, int q_heads, const PagedKvView& kv, int64_t begin, int64_t end,
                    float scale, float* logits, int64_t stride) override {
    auto heads = std::make_shared<std::vector<KvHeadView>>(kv.heads, kv.heads + kv.kv_heads);
    PagedKvView v = kv;
    v.heads = heads->data();
    push([=, this] {
      cpu::score_logits(q, q_heads, v, begin, end, scale, logits, stride, pool_);
      (void)heads;
    });
  }
  void logit_merge_attention(const LogitMergeArgs& args) override {
    auto heads = std::make_shared<std::vector<KvHeadView>>(args.local.heads,
                                                           args.local.heads + args.local.kv_heads);
    LogitMergeArgs a = args;
    a.local.heads = heads->data();
    push([=, this] {
      cpu::logit_merge_attention(a, pool_);
      (void)heads;
    });
  }
  void merge_partials(int n, const float* const* o_parts, const float* const* lse_parts, int heads,
                      int head_dim, float* o_out, float* lse_out) override {
    std::vector<const float*> o(o_parts, o_parts + n), l(lse_parts, lse_parts + n);
    push([=] { cpu::merge_partials(n, o.data(), l.data(), heads, head_dim, o_out, lse_out); });
  }
  // Every op (core/accelerator_ops.h), each queued by its own `run` below.
  bool supports(OpKind) const override { return true; }
  void enqueue(const AcceleratorOp& op) override {
    std::visit([this](const auto& args) { run(args); }, op);
  }

  std::unique_ptr<LayerWork> make_layer_work(const ModelPreset& model, int max_batch,
                                             int layer) override {
    LayerCharge charge;
    if (!run_layer_gemms_ || layer_weight_bytes(model) >= kSharedWeightsFromBytes)
      charge = [budget = std::static_pointer_cast<BudgetAllocator>(memory_)](size_t bytes) {
        return budget->reserve(bytes);
      };
    return make_cpu_layer_work([this](std::function<void()> fn) { push(std::move(fn)); }, pool_,
                               *memory_, model, max_batch, layer_weight_seed(layer),
                               std::move(charge), run_layer_gemms_);
  }

  int64_t synchronize() override {
    order_side_copies();  // everything queued so far includes the side copies
    std::unique_lock<std::mutex> lk(mu_);
    done_cv_.wait(lk, [&] { return queue_.empty() && !running_; });
    const int64_t busy = busy_ns_;
    busy_ns_ = 0;
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
    return busy;
  }

 private:
  // Offload streaming: a second thread plays the GPU's copy engine, filling one of two chunk
  // buffers in accelerator memory while the worker pool attends the other.
  void run(const StreamAttentionArgs& s) {
    std::vector<DecodeAttentionArgs> a(s.seqs, s.seqs + s.batch);
    auto tables = snapshot_views(a);
    push([this, a = std::move(a), tables = std::move(tables), chunk_tokens = s.chunk_tokens] {
      run_stream(a, chunk_tokens);
    });
  }
  // Policy kernels: host arrays and views copied now, run on the pool in queue order.
  void run(const HeavyHitterArgs& args) {
    auto filled = std::make_shared<std::vector<int64_t>>(args.filled, args.filled + args.batch);
    auto fresh = std::make_shared<std::vector<int64_t>>(
        args.fresh_slot, args.fresh_slot + static_cast<size_t>(args.batch) * args.kv_heads);
    HeavyHitterArgs a = args;
    a.filled = filled->data();
    a.fresh_slot = fresh->data();
    push([=, this] {
      cpu::heavy_hitter_update(a, pool_);
      (void)filled, (void)fresh;
    });
  }
  void run(const PageBoundFoldArgs& args) {
    auto c = std::make_shared<std::vector<std::byte*>>(args.c_blocks, args.c_blocks + args.rows);
    auto r = std::make_shared<std::vector<std::byte*>>(args.r_blocks, args.r_blocks + args.rows);
    PageBoundFoldArgs a = args;
    a.c_blocks = c->data();
    a.r_blocks = r->data();
    push([=] {
      cpu::fold_page_bounds(a);
      (void)c, (void)r;
    });
  }
  void run(const PageBoundScoreArgs& args) {
    // Views of both planes of every sequence, with their head tables, copied.
    auto views = std::make_shared<std::vector<PagedKvView>>();
    auto heads = std::make_shared<std::vector<std::vector<KvHeadView>>>();
    for (const PagedKvView* plane : {args.centers, args.radii})
      for (int b = 0; b < args.batch; ++b) {
        heads->emplace_back(plane[b].heads, plane[b].heads + plane[b].kv_heads);
        views->push_back(plane[b]);
        views->back().heads = heads->back().data();
      }
    PageBoundScoreArgs a = args;
    a.centers = views->data();
    a.radii = views->data() + args.batch;
    push([=, this] {
      cpu::score_page_bounds(a, pool_);
      (void)views, (void)heads;
    });
  }
  void run(const TopkRowsArgs& args) {
    push([=, this] { cpu::topk_rows_ascending(args, pool_); });
  }
  void run(const GroupMaxArgs& args) {
    push([=] { cpu::group_max_rows(args); });
  }
  void run(const ProjectRowsArgs& args) {
    push([=] { cpu::project_rows(args); });
  }
  void run(const RowsToPagesArgs& args) {
    push([=] { cpu::rows_to_pages(args); });
  }

  void run(const HostKernelArgs& k) {
    push([this, fn = k.fn] { fn(pool_); });
  }

  // Page tables are copied at enqueue time: the caller may change its cache right after.
  static std::vector<std::vector<KvHeadView>> snapshot_views(std::vector<DecodeAttentionArgs>& a) {
    std::vector<std::vector<KvHeadView>> t;
    for (auto& s : a) {
      t.emplace_back(s.kv.heads, s.kv.heads + s.kv.kv_heads);
      s.kv.heads = t.back().data();
    }
    return t;
  }
  void run_stream(const std::vector<DecodeAttentionArgs>& a, int64_t chunk_tokens);
  void serve_copies() {
    for (;;) {
      std::function<void()> fn;
      {
        std::unique_lock<std::mutex> lk(copy_mu_);
        copy_cv_.wait(lk, [&] { return copy_stop_ || !copy_queue_.empty(); });
        if (copy_queue_.empty()) return;
        fn = std::move(copy_queue_.front());
        copy_queue_.pop_front();
      }
      fn();
    }
  }
  void push(std::function<void()> fn) {
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
      std::exception_ptr err;
      try {
        fn();
      } catch (...) {  // like a CUDA error: reported by the next synchronize
        err = std::current_exception();
      }
      const int64_t dt = now_ns() - t0 - std::exchange(idle_ns_, 0);
      {
        std::lock_guard<std::mutex> lk(mu_);
        running_ = false;
        busy_ns_ += dt;
        if (err && !error_) error_ = err;
      }
      done_cv_.notify_all();
    }
  }

  AcceleratorInfo info_;
  std::atomic<int64_t> used_{0};
  std::shared_ptr<BufferAllocator> memory_;
  bool run_layer_gemms_ = true;
  ThreadPool pool_;
  std::mutex mu_;
  std::condition_variable cv_, done_cv_;
  std::deque<std::function<void()>> queue_;
  bool running_ = false, stop_ = false;
  int64_t busy_ns_ = 0;
  std::exception_ptr error_;  // first failure of a queued operation, rethrown by synchronize
  std::thread thread_;
  // Copy engine: its own thread and queue; stream_attention's chunk buffers.
  std::mutex copy_mu_;
  std::condition_variable copy_cv_;
  std::deque<std::function<void()>> copy_queue_;
  bool copy_stop_ = false;
  int64_t side_issued_ = 0;   // side copies handed to the copy thread (under copy_mu_)
  int64_t side_ordered_ = 0;  // of those, the ones the queue already waits for (under copy_mu_)
  std::mutex side_mu_;
  std::condition_variable side_cv_;
  int64_t side_done_ = 0;  // side copies finished (under side_mu_)
  int64_t idle_ns_ = 0;    // queue thread only: time the current operation spent waiting
  std::thread copy_thread_;
  Buffer stream_buf_;
};

void CpuAccelerator::run_stream(const std::vector<DecodeAttentionArgs>& a, int64_t chunk_tokens) {
  if (a.empty()) return;
  const StreamPlan plan = plan_stream(a, chunk_tokens);
  if (plan.chunks == 0) {
    write_empty_partials(a, plan);
    return;
  }
  if (stream_buf_.size() < plan.buffer_bytes()) {
    stream_buf_.reset();
    stream_buf_ = memory_->allocate(plan.buffer_bytes());  // counts against the budget
  }
  std::byte* buf = stream_buf_.as<std::byte>();
  ChunkHandover handover;
  {
    std::lock_guard<std::mutex> lk(copy_mu_);
    copy_queue_.push_back([&] {
      for (int64_t ci = 0; ci < plan.chunks; ++ci) {
        handover.wait_half_free(ci);
        copy_chunk(plan, a, buf, ci);
        handover.copied(ci);
      }
      handover.copies_done();
    });
  }
  copy_cv_.notify_one();

  ChunkAttention attention(plan, a);
  try {
    for (int64_t ci = 0; ci < plan.chunks; ++ci) {
      handover.wait_copied(ci);
      attention.attend(buf, ci, pool_);
      handover.attended(ci);
    }
  } catch (...) {
    handover.finish(plan.chunks);
    throw;
  }
  handover.finish(plan.chunks);
  attention.merge();
}

}  // namespace

std::unique_ptr<Accelerator> make_cpu_accelerator(int64_t capacity_bytes, int threads,
                                                  bool run_layer_gemms) {
  if (threads <= 0) threads = std::max<int>(1, static_cast<int>(allowed_cpus().size()) / 2);
  if (capacity_bytes <= 0) capacity_bytes = 2LL << 30;
  return std::make_unique<CpuAccelerator>(capacity_bytes, threads, run_layer_gemms);
}

}  // namespace hb::cpu
