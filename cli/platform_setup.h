#pragma once
// Wiring between the command line and memtier: turns placement options into the platform a
// sweep runs on (host tiers with verified-placement allocators) and records what the report's
// context needs to say about the machine.
#include <string>

#include "reports/report.h"
#include "reports/run/runner.h"

namespace hb::cli {

struct PlatformSetup {
  run::RunEnvironment env;
  std::string command_line;
  reports::TopologySummary topology;
  std::map<std::string, std::string> settings;
};

PlatformSetup setup_platform(const run::SweepSpec& spec);
void fill_context(reports::ReportContext& ctx, const PlatformSetup& platform);
// The process's command line as typed (from /proc/self/cmdline).
std::string command_line_text();

}  // namespace hb::cli
