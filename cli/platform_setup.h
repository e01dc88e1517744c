#pragma once
// Wiring between the command line and memtier: turns placement options into the platform a
// sweep runs on (host tiers with verified-placement allocators) and records what the report's
// context needs to say about the machine.
#include <string>

#include "reports/report.h"
#include "bench/runner.h"

namespace hb::cli {

struct PlatformSetup {
  bench::RunEnvironment env;
  std::string command_line;
  reports::TopologySummary topology;
  std::map<std::string, std::string> settings;
};

PlatformSetup setup_platform(const bench::SweepSpec& spec);
void fill_context(reports::ReportContext& ctx, const PlatformSetup& platform);
// The process's command line as typed (from /proc/self/cmdline).
std::string command_line_text();

// Fleet runs: places one rank of `local_size` on this host. With CUDA devices the node-local
// rank picks the device (unless `device_given`), and the process is bound to the CPUs of that
// GPU's NUMA node; with the cpu accelerator the ranks spread over the NUMA nodes with CPUs. A
// launcher's binding already inside that node is kept. Must run before any worker thread
// starts (threads inherit the binding). Returns what it did, for the report:
// "CPUs 0-7 (NUMA node 0, local to GPU 0)".
std::string place_rank(bench::SweepSpec& spec, int local_rank, int local_size, bool device_given);

}  // namespace hb::cli
