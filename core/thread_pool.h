#pragma once
// A fixed pool of worker threads, created once and reused by every kernel call (a pool per
// call would cost more than a decode step at short contexts). The calling thread takes part
// as worker 0. Workers spin briefly before sleeping so back-to-back calls wake fast.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace hb {

class ThreadPool {
 public:
  // threads = total workers including the caller; 0 = all CPUs this process may run on.
  // `option` names what set the count (e.g. "--host-threads"): when the system refuses a thread
  // the workers already started are stopped and start_thread's hb::Error says which limit was
  // hit and which option to lower.
  explicit ThreadPool(int threads = 0, std::string option = {});
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Runs fn(task, worker) for task in [0, tasks), spread dynamically over the workers;
  // returns when all are done. One parallel_for at a time per pool; one called from inside a
  // task of the same pool runs its tasks inline on that thread.
  void parallel_for(int64_t tasks, const std::function<void(int64_t task, int worker)>& fn);

  // Pins worker i to cpus[i % cpus.size()] (OS CPU numbers, hwloc). Returns a description of
  // what was done, or throws hb::Error when a CPU does not exist.
  std::string pin_to_cpus(const std::vector<int>& cpus);

  // The process-wide default pool (all allowed CPUs).
  static ThreadPool& global();

 private:
  void worker_loop(int index);
  void stop_workers();
  void run_tasks(int worker);

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int64_t> next_task_{0};
  std::atomic<int> pending_workers_{0};
  int64_t tasks_ = 0;
  const std::function<void(int64_t, int)>* fn_ = nullptr;
  bool stop_ = false;
};

// Starts a thread running `fn`. When the system refuses it (std::system_error: pid or thread
// limits, memory for its stack under ulimit -v) throws an hb::Error (exit 2: fixable before the
// run) saying which thread (`what`, e.g. "thread 3 of 8") and which option set the count
// (`option`, e.g. "--host-threads"; empty: none), with the limits to raise.
std::thread start_thread(std::function<void()> fn, const std::string& what,
                         const std::string& option);

// CPUs this process may run on (sched_getaffinity).
std::vector<int> allowed_cpus();

}  // namespace hb
