#include "memtier/machine_load.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace hb::memtier {

namespace {

void read_cpu_line(const std::string& proc_root, LoadSnapshot& s) {
  std::ifstream in(proc_root + "/stat");
  std::string label;
  // cpu user nice system idle iowait irq softirq steal ...
  uint64_t f[8] = {};
  if (!(in >> label) || label != "cpu") return;
  for (auto& v : f)
    if (!(in >> v)) return;
  s.known = true;
  s.idle = f[3];
  s.iowait = f[4];
  s.steal = f[7];
  for (uint64_t v : f) s.total += v;
}

// The state letter of /proc/PID/stat: after the command's closing parenthesis (a command may
// contain spaces and parentheses itself).
char process_state(const std::filesystem::path& stat_file) {
  std::ifstream in(stat_file);
  std::string line;
  if (!std::getline(in, line)) return '?';
  const auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() ? line[close + 2] : '?';
}

int count_runnable_others(const std::string& proc_root, int self) {
  std::error_code ec;
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(proc_root, ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (std::strtol(name.c_str(), nullptr, 10) == self) continue;
    n += process_state(e.path() / "stat") == 'R';
  }
  return ec ? -1 : n;
}

std::string percent(uint64_t part, uint64_t whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", whole ? 100.0 * static_cast<double>(part) / whole : 0.0);
  return buf;
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

}  // namespace

LoadSnapshot take_load_snapshot(const std::string& proc_root, const std::string& sys_root,
                                int self) {
  LoadSnapshot s;
  read_cpu_line(proc_root, s);
  if (std::ifstream in(proc_root + "/loadavg"); in) in >> s.loadavg_1min;
  s.runnable_others = count_runnable_others(proc_root, self < 0 ? getpid() : self);
  if (std::ifstream in(sys_root + "/devices/system/cpu/cpu0/cpufreq/scaling_governor"); in)
    in >> s.governor;
  return s;
}

std::map<std::string, std::string> load_facts(const LoadSnapshot& start, const LoadSnapshot& end) {
  std::map<std::string, std::string> f;
  if (start.loadavg_1min >= 0) f["load.avg_1min_start"] = number(start.loadavg_1min);
  if (end.loadavg_1min >= 0) f["load.avg_1min_end"] = number(end.loadavg_1min);
  if (start.runnable_others >= 0)
    f["load.runnable_others_start"] = std::to_string(start.runnable_others);
  if (end.runnable_others >= 0) f["load.runnable_others_end"] = std::to_string(end.runnable_others);
  if (start.known && end.known && end.total > start.total) {
    const uint64_t dt = end.total - start.total;
    f["load.steal_percent"] = percent(end.steal - start.steal, dt);
    f["load.iowait_percent"] = percent(end.iowait - start.iowait, dt);
    f["load.idle_percent"] = percent(end.idle - start.idle, dt);
  }
  f["load.cpu_governor"] = start.governor.empty() ? "unknown" : start.governor;
  return f;
}

}  // namespace hb::memtier
