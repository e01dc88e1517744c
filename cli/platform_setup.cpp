#include "cli/platform_setup.h"

#include <fstream>
#include <sstream>

#include "core/error.h"

namespace hb::cli {

namespace {

int64_t mem_available_bytes() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  int64_t kb = 0;
  std::string unit;
  while (f >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  return 0;
}

}  // namespace

std::string command_line_text() {
  std::ifstream f("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  for (auto& c : all)
    if (c == '\0') c = ' ';
  while (!all.empty() && all.back() == ' ') all.pop_back();
  return all;
}

PlatformSetup setup_platform(const run::SweepSpec& spec) {
  PlatformSetup p;
  p.command_line = command_line_text();
  if (!spec.kv_node.empty() || !spec.emulate_cxl.empty())
    throw Error("--kv-node and --emulate-cxl need the memtier placement support, which is not in this build yet",
                "drop those options");
  p.env.cpu_node = 0;
  p.env.host_tiers.push_back(HostTier{MemoryLocation{MemoryKind::local_dram, 0, false},
                                      host_allocator(MemoryLocation{MemoryKind::local_dram, 0, false})});
  // Leave a quarter of what is free for everything else.
  p.env.host_memory_budget_bytes = mem_available_bytes() / 4 * 3;
  return p;
}

void fill_context(reports::ReportContext& ctx, const PlatformSetup& platform) {
  reports::fill_host_context(ctx);
  ctx.topology = platform.topology;
  ctx.system_settings = platform.settings;
}

}  // namespace hb::cli
