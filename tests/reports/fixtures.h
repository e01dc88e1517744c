#pragma once
// Crafted reports for the reports tests: deterministic samples around a chosen median, so the
// expected compare decisions and table cells are known in advance.
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/rng.h"
#include "reports/report.h"

namespace hb::reports::testing {

// A fresh directory per test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    std::string t = (std::filesystem::temp_directory_path() / "hb-reports-XXXXXX").string();
    path_ = ::mkdtemp(t.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const {
    return (std::filesystem::path(path_) / name).string();
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Makes a character device node at `path` (e.g. 1,3 = null, 1,7 = full): tests write to private
// copies, never to the machine's /dev/null or /dev/full, so a writer that regresses to
// replace-by-rename breaks only the test, not every later command on the machine. False (the
// caller skips) when this process may not make device nodes (not root, a nodev mount).
inline bool make_char_device(const std::string& path, unsigned major_id, unsigned minor_id) {
  if (::mknod(path.c_str(), S_IFCHR | 0666, makedev(major_id, minor_id)) != 0) return false;
  const int fd = ::open(path.c_str(), O_WRONLY);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

// n samples ~ median_ns * (1 + rel_noise * N(0,1)), seeded by (seed, seq_len).
inline std::vector<double> noisy_samples(double median_ns, double rel_noise, int n, uint64_t seed) {
  Rng rng(seed);
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(median_ns * (1.0 + rel_noise * rng.normal()));
  return v;
}

inline Point make_point(const std::string& strategy, int64_t seq_len, double median_ns,
                        double rel_noise = 0.01, int n = 30, uint64_t seed = 1) {
  Point p;
  p.axes.model = "llama-3-8b";
  p.axes.family = "llama";
  p.axes.seq_len = seq_len;
  p.axes.batch = 1;
  p.axes.strategy = strategy;
  p.role = role_from_name(strategy);
  p.axes.kv_dtype = "fp16";
  p.axes.workload = "structured";
  p.axes.accelerator = "cpu";
  p.axes.decode_steps = 8;
  p.axes.page_tokens = 16;
  p.provenance = Provenance::emulated;
  static_cast<Timing&>(p.step) =
      Timing::from_samples(noisy_samples(median_ns, rel_noise, n, seed * 1000003 + seq_len));
  p.step.stop_reason = StopReason::noise;
  p.step.warmup_steps = 2;
  p.phases["cpu"] = Timing::from_samples(noisy_samples(median_ns * 0.6, rel_noise, n, seed + 7));
  p.traffic_per_step.read(Processor::cpu, MemoryKind::local_dram, seq_len * 1024);
  p.traffic_per_step.h2d_bytes = 256;
  p.traffic_per_step.d2h_bytes = 256;
  p.traffic_per_step.cpu_flops = 4.0 * seq_len * 128;
  p.traffic_per_step.kernel_launches = 3;
  p.traffic_per_step.syncs = 1;
  p.traffic_per_step.select(Processor::cpu, 0.5 * seq_len);
  p.placement.push_back({"K", "local-dram@0", seq_len * 512, {{0, seq_len / 8}}});
  p.accuracy.steps_scored = 8;
  p.accuracy.rel_l2 = 1e-3;
  p.accuracy.cosine = 0.999999;
  p.accuracy.max_abs_err = 2e-3;
  p.accuracy.mass_recall = 1.0;
  p.strategy_params["top_k_ratio"] = "0.1";
  return p;
}

inline Point make_failed_point(const std::string& strategy, int64_t seq_len, PointStatus status,
                               const std::string& reason) {
  Point p = make_point(strategy, seq_len, 1);
  p.status = status;
  p.reason = reason;
  p.step = {};
  p.phases.clear();
  p.traffic_per_step = {};
  p.placement.clear();
  p.accuracy = {};
  return p;
}

// The point as `run --repetitions N` records it: its samples split into N equal passes in order
// (the samples' count must be a multiple of N).
inline Point with_passes(Point p, int passes = 5) {
  const auto n = static_cast<int64_t>(p.step.samples_ns.size());
  p.step.pass_sizes.assign(passes, n / passes);
  return p;
}

inline Report with_passes(Report r, int passes = 5) {
  for (auto& p : r.points)
    if (p.timed()) p = with_passes(std::move(p), passes);
  return r;
}

// Every sample of every timed point of `r` times `factor` (rounds kept): a planted change.
inline Report scaled(Report r, double factor) {
  for (auto& p : r.points) {
    if (!p.timed()) continue;
    std::vector<double> v = p.step.samples_ns;
    for (auto& x : v) x *= factor;
    static_cast<Timing&>(p.step) = Timing::from_samples(v);
  }
  r.speedups = compute_speedups(r.points);
  return r;
}

// Two strategies over three sequence lengths; full-gpu runs out of memory at the longest.
inline Report make_report() {
  Report r;
  r.context.tool_version = "0.1.0";
  r.context.git_commit = "abc123";
  r.context.build_type = "Release";
  r.context.date_utc = "2025-01-31T12:00:00Z";
  r.context.host = "testhost";
  r.context.os = "Linux 6.1 x86_64";
  r.context.cpu_model = "Test CPU";
  r.context.simd_level = "avx2";
  r.context.topology.facts["sockets"] = "1";
  r.context.topology.nodes.push_back({0, "local-dram", int64_t(8) << 30, false, "has CPUs"});
  r.context.system_settings["thp"] = "madvise";
  r.context.accelerator.kind = AcceleratorKind::cpu;
  r.context.accelerator.name = "cpu-accelerator (1 thread)";
  r.context.accelerator.emulated = true;
  r.context.accelerator.capacity_bytes = int64_t(1) << 30;
  r.context.command_line = "hybridbench run --seq-len 4k:16k:x2";
  r.context.sweep["seq_len"] = "4k:16k:x2";
  for (int64_t len : {4096, 8192, 16384}) {
    const double scale = static_cast<double>(len) / 4096;
    r.points.push_back(make_point("cpu-only", len, 2e6 * scale));
    if (len < 16384)
      r.points.push_back(make_point("full-gpu", len, 1e6 * scale));
    else
      r.points.push_back(make_failed_point("full-gpu", len, PointStatus::oom,
                                           "KV 2.0 GiB > accelerator capacity 1.0 GiB"));
  }
  r.points.front().trajectory.push_back({{"step", 0}, {"top_k_ratio", 0.1}});
  r.speedups = compute_speedups(r.points);
  return r;
}

}  // namespace hb::reports::testing
