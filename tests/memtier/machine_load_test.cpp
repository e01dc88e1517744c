#include "memtier/machine_load.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace hb::memtier {
namespace {

namespace fs = std::filesystem;

// A /proc and /sys of our own: the aggregate cpu line, the load average, three processes (one
// of them "us", one runnable with a command that holds ") R (" to trip a naive parser).
struct FakeMachine {
  fs::path root = fs::temp_directory_path() / ("hb-load-" + std::to_string(getpid()));
  FakeMachine() {
    fs::create_directories(root / "proc");
    fs::create_directories(root / "sys/devices/system/cpu/cpu0/cpufreq");
    write("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "performance\n");
    process(100, "init", 'S');
    process(200, "busy) R (loop", 'R');
    process(300, "hybridbench", 'R');
  }
  ~FakeMachine() { fs::remove_all(root); }
  void write(const std::string& rel, const std::string& text) { std::ofstream(root / rel) << text; }
  void process(int pid, const std::string& comm, char state) {
    fs::create_directories(root / "proc" / std::to_string(pid));
    write("proc/" + std::to_string(pid) + "/stat",
          std::to_string(pid) + " (" + comm + ") " + state + " 1 1 1 0 -1\n");
  }
  // user nice system idle iowait irq softirq steal
  void cpu(uint64_t user, uint64_t idle, uint64_t iowait, uint64_t steal, double load) {
    write("proc/stat", "cpu  " + std::to_string(user) + " 0 0 " + std::to_string(idle) + " " +
                           std::to_string(iowait) + " 0 0 " + std::to_string(steal) +
                           " 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n");
    write("proc/loadavg", std::to_string(load) + " 0.5 0.2 2/300 4000\n");
  }
  LoadSnapshot snap() const {
    return take_load_snapshot((root / "proc").string(), (root / "sys").string(), 300);
  }
};

TEST(MachineLoad, ReadsStatLoadRunnableOthersAndGovernor) {
  FakeMachine m;
  m.cpu(1000, 9000, 0, 0, 1.5);
  const LoadSnapshot a = m.snap();
  EXPECT_TRUE(a.known);
  EXPECT_DOUBLE_EQ(a.loadavg_1min, 1.5);
  EXPECT_EQ(a.total, 10000u);
  EXPECT_EQ(a.runnable_others, 1);  // pid 200; pid 300 is "us"
  EXPECT_EQ(a.governor, "performance");
  m.cpu(1900, 9900, 100, 100, 2.25);  // 2000 ticks later, 100 of them iowait, 100 steal
  const auto f = load_facts(a, m.snap());
  EXPECT_EQ(f.at("load.avg_1min_start"), "1.50");
  EXPECT_EQ(f.at("load.avg_1min_end"), "2.25");
  EXPECT_EQ(f.at("load.steal_percent"), "5.0");  // 100 of 2000 ticks
  EXPECT_EQ(f.at("load.iowait_percent"), "5.0");
  EXPECT_EQ(f.at("load.runnable_others_start"), "1");
  EXPECT_EQ(f.at("load.cpu_governor"), "performance");
}

TEST(MachineLoad, MissingFilesStayUnknownWithoutFailing) {
  const LoadSnapshot s = take_load_snapshot("/nonexistent-proc", "/nonexistent-sys", 1);
  EXPECT_FALSE(s.known);
  EXPECT_LT(s.loadavg_1min, 0);
  EXPECT_LT(s.runnable_others, 0);
  const auto f = load_facts(s, s);
  EXPECT_EQ(f.count("load.steal_percent"), 0u);
  EXPECT_EQ(f.at("load.cpu_governor"), "unknown");
}

TEST(MachineLoad, ThisMachineCanBeRead) {
  const LoadSnapshot s = take_load_snapshot();
  EXPECT_TRUE(s.known);  // Linux: /proc/stat exists
  EXPECT_GE(s.loadavg_1min, 0);
  EXPECT_GE(s.runnable_others, 0);
}

}  // namespace
}  // namespace hb::memtier
