#include "core/thread_pool.h"

#include <hwloc.h>
#include <sched.h>

#include <system_error>

#include "core/error.h"

namespace hb {

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  if (cpus.empty()) cpus.push_back(0);
  return cpus;
}

ThreadPool::ThreadPool(int threads, std::string option) {
  if (threads <= 0) threads = static_cast<int>(allowed_cpus().size());
  workers_.reserve(static_cast<size_t>(threads - 1));
  for (int i = 1; i < threads; ++i) {
    try {
      workers_.push_back(start_thread(
          [this, i] { worker_loop(i); },
          "thread " + std::to_string(i + 1) + " of " + std::to_string(threads), option));
    } catch (...) {
      // The destructor does not run for a half-built pool: join what started.
      stop_workers();
      throw;
    }
  }
}

std::thread start_thread(std::function<void()> fn, const std::string& what,
                         const std::string& option) {
  try {
    return std::thread(std::move(fn));
  } catch (const std::exception& e) {  // std::system_error (EAGAIN), or bad_alloc for its state
    throw Error("cannot start " + what + (option.empty() ? "" : " for " + option) + ": " +
                    e.what() +
                    " (the system's limit on threads or processes, or on memory for their "
                    "stacks, is reached)",
                (option.empty() ? std::string("use fewer threads") : "lower " + option) +
                    ", or raise the limit (ulimit -u, ulimit -v, /proc/sys/kernel/threads-max, "
                    "pid_max, the cgroup's pids.max)",
                kExitUsage);
  }
}

ThreadPool::~ThreadPool() { stop_workers(); }

void ThreadPool::stop_workers() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
    generation_.fetch_add(1);
  }
  cv_.notify_all();
  for (auto& t : workers_) t.join();
  workers_.clear();
}

ThreadPool& ThreadPool::global() {
  static ThreadPool pool(0);
  return pool;
}

namespace {
// The pool whose task this thread is running, if any: a parallel_for from inside one of its own
// tasks runs inline instead of clobbering the call in progress.
thread_local const ThreadPool* t_running_in = nullptr;
}  // namespace

void ThreadPool::run_tasks(int worker) {
  struct Running {  // restored however the tasks end
    const ThreadPool* outer = t_running_in;
    explicit Running(const ThreadPool* p) { t_running_in = p; }
    ~Running() { t_running_in = outer; }
  } running(this);
  for (;;) {
    const int64_t t = next_task_.fetch_add(1, std::memory_order_relaxed);
    if (t >= tasks_) break;
    (*fn_)(t, worker);
  }
}

void ThreadPool::worker_loop(int index) {
  uint64_t seen = 0;
  for (;;) {
    // Spin a little: decode steps arrive back to back and a futex wake costs ~5 us.
    uint64_t g = generation_.load(std::memory_order_acquire);
    for (int spin = 0; g == seen && spin < 20000; ++spin) {
      __builtin_ia32_pause();
      g = generation_.load(std::memory_order_acquire);
    }
    if (g == seen) {
      std::unique_lock<std::mutex> lk(mu_);
      cv_.wait(lk, [&] { return generation_.load() != seen; });
      g = generation_.load();
    }
    seen = g;
    if (stop_) return;
    run_tasks(index);
    pending_workers_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

void ThreadPool::parallel_for(int64_t tasks, const std::function<void(int64_t, int)>& fn) {
  if (tasks <= 0) return;
  if (workers_.empty() || tasks == 1 || t_running_in == this) {
    for (int64_t t = 0; t < tasks; ++t) fn(t, 0);
    return;
  }
  {
    std::lock_guard<std::mutex> lk(mu_);
    fn_ = &fn;
    tasks_ = tasks;
    next_task_.store(0, std::memory_order_relaxed);
    pending_workers_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
  }
  cv_.notify_all();
  run_tasks(0);
  while (pending_workers_.load(std::memory_order_acquire) != 0) __builtin_ia32_pause();
}

std::string ThreadPool::pin_to_cpus(const std::vector<int>& cpus) {
  if (cpus.empty()) return "not pinned";
  hwloc_topology_t topo;
  hwloc_topology_init(&topo);
  hwloc_topology_load(topo);
  std::string desc;
  auto pin = [&](std::thread::native_handle_type th, int cpu) {
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    hwloc_bitmap_only(set, static_cast<unsigned>(cpu));
    const int rc = th ? hwloc_set_thread_cpubind(topo, th, set, HWLOC_CPUBIND_THREAD)
                      : hwloc_set_cpubind(topo, set, HWLOC_CPUBIND_THREAD);
    hwloc_bitmap_free(set);
    if (rc != 0) {
      hwloc_topology_destroy(topo);
      throw Error("cannot pin a worker thread to CPU " + std::to_string(cpu),
                  "pick CPUs from this machine's allowed set (see `hybridbench topo`)");
    }
  };
  pin(0, cpus[0]);  // the calling thread is worker 0
  desc = "worker 0 -> cpu " + std::to_string(cpus[0]);
  for (size_t i = 0; i < workers_.size(); ++i) {
    const int cpu = cpus[(i + 1) % cpus.size()];
    pin(workers_[i].native_handle(), cpu);
    desc += ", worker " + std::to_string(i + 1) + " -> cpu " + std::to_string(cpu);
  }
  hwloc_topology_destroy(topo);
  return desc;
}

}  // namespace hb
