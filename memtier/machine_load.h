#pragma once
// What else the machine was doing during a run: the load average, the CPU time the
// hypervisor stole and the time spent waiting on I/O (/proc/stat), the frequency governor, and
// the runnable processes that are not this one. A run on a busy machine still pairs its
// strategies round by round, but its absolute times and its noise carry the load; the report
// says so instead of leaving the reader to guess.
#include <cstdint>
#include <map>
#include <string>

namespace hb::memtier {

struct LoadSnapshot {
  bool known = false;        // /proc/stat was read
  double loadavg_1min = -1;  // /proc/loadavg; -1 unknown
  // Aggregate "cpu" line of /proc/stat, in clock ticks.
  uint64_t total = 0, idle = 0, iowait = 0, steal = 0;
  int runnable_others = -1;  // processes in state R other than this one (/proc/PID/stat)
  std::string governor;      // cpu0's scaling_governor; "" unknown
};

// Reads under `proc_root` (/proc) and `sys_root` (/sys): a fixture tree in tests. Never fails:
// what cannot be read stays unknown. `self` is the pid not to count (this process).
LoadSnapshot take_load_snapshot(const std::string& proc_root = "/proc",
                                const std::string& sys_root = "/sys", int self = -1);

// The run's load as report facts ("load.avg_1min_start", "load.steal_percent", ...), from
// snapshots at its start and end. Percentages are of all CPU time between the two.
std::map<std::string, std::string> load_facts(const LoadSnapshot& start, const LoadSnapshot& end);

}  // namespace hb::memtier
