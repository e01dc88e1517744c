// calibrate_this_machine on a tiny ladder: which figures it fills, each with its source text,
// the progress lines, and that figures already given stay when !overwrite. The measured values
// depend on the machine; what is pinned here is everything else.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "core/model_presets.h"
#include "model/calibrate.h"

namespace hb::model {
namespace {

const std::string kHere =
    "calibrated on this machine by hybridbench validate-model (10th percentile of repeats, "
    "caches flushed before each): ";

CalibrationOptions tiny_ladder() {
  CalibrationOptions co;
  co.host_threads = 1;
  co.accelerator_threads = 2;  // not the host's: the accelerator's curve is measured on its own
  co.accelerator_capacity_bytes = int64_t{64} << 20;
  co.shape = find_model_preset("qwen2.5-0.5b").shape;
  co.min_bytes = size_t{1} << 20;
  co.max_bytes = size_t{4} << 20;  // working sets 1, 2, 4 MiB
  co.seconds_per_figure = 0.005;
  co.flush_bytes = size_t{1} << 20;
  return co;
}

bool starts_with(const std::string& s, const std::string& head) { return s.rfind(head, 0) == 0; }

TEST(Calibrate, FillsEveryFigureWithItsSource) {
  const CalibrationOptions co = tiny_ladder();
  std::vector<std::string> said;
  const PlatformModel m =
      calibrate_this_machine({}, co, true, [&](const std::string& s) { said.push_back(s); });
  const std::string what = "decode attention " + co.shape.to_string();
  const std::map<std::string, std::string> want = {
      {"cpu.read_curve", kHere + what + ", 1 host thread(s), working sets 1.00-4 MiB"},
      {"cpu.core_read_gbps", kHere + what + " at the largest working set (4 MiB), per thread"},
      {"cpu.attention_gflops_per_core", kHere + what + ", fastest working set, per thread"},
      {"cpu.cores", "the sweep's host threads (1)"},
      {"cpu.dispatch_us", kHere + "empty parallel_for on the host pool"},
      {"cpu.select_gelems_per_core",
       kHere + "top-k (k = n/8) of 8 rows of 32768 logits, one thread"},
      {"accelerator.memory_bytes", "the sweep's accelerator capacity"},
      {"accelerator.attention_efficiency", "1: the curve below is measured with the same kernels"},
      {"accelerator.memory_curve", kHere + what + ", the accelerator's 2 thread(s)"},
      {"accelerator.memory_gbps",
       kHere + what + " at the largest working set, the accelerator's threads"},
      {"accelerator.tflops", kHere + what + ", fastest working set, the accelerator's threads"},
      {"accelerator.select_gelems",
       kHere + "the per-core top-k rate x the accelerator's 2 thread(s)"},
      {"links[0].h2d_gbps", kHere + "cpu accelerator copy_to_device at the largest working set"},
      {"links[0].d2h_gbps", kHere + "cpu accelerator copy_to_host at the largest working set"},
      {"links[0].copy_curve", kHere + "cpu accelerator copies (both directions) by size"},
      {"links[0].latency_us", kHere + "a queued tiny op (same as a launch)"},
      {"accelerator.launch_us", kHere + "(16 queued tiny compute ops + sync - 1 op + sync) / 15"},
      {"accelerator.sync_us", kHere + "tiny compute op + synchronize, minus a launch"}};
  std::map<std::string, std::string> got = m.sources;
  ASSERT_EQ(got.count("accelerator.gemm_gbps"), 1u);
  const std::string gemm = got["accelerator.gemm_gbps"];
  EXPECT_TRUE(starts_with(gemm, kHere + "decode GEMV (1 row) over ")) << gemm;
  EXPECT_NE(gemm.find(" MiB of blocked " + std::string(dtype_name(co.shape.kv_dtype)) +
                      " weights, the accelerator's 2 thread(s)"),
            std::string::npos)
      << gemm;
  got.erase("accelerator.gemm_gbps");
  EXPECT_EQ(got, want);

  EXPECT_EQ(m.source, PlatformSource::calibrated);
  EXPECT_EQ(m.name, "this-machine");
  EXPECT_EQ(m.cpu.name, "this machine's CPU (1 host thread(s))");
  EXPECT_EQ(m.cpu.cores, 1);
  EXPECT_EQ(m.accelerator.kind, "cpu");
  EXPECT_EQ(m.accelerator.name, "cpu-accelerator (2 threads)");
  EXPECT_EQ(m.accelerator.threads, 2);
  EXPECT_EQ(m.accelerator.memory_bytes, int64_t{64} << 20);
  EXPECT_EQ(m.accelerator.memory_usable_share, 1.0);
  EXPECT_EQ(m.accelerator.attention_efficiency, 1.0);
  ASSERT_EQ(m.links.size(), 1u);
  EXPECT_EQ(m.links[0].host_node, m.accelerator.numa_node);
  const std::vector<double> sizes = {1 << 20, 2 << 20, 4 << 20};
  for (const auto* curve :
       {&m.cpu.read_curve, &m.accelerator.memory_curve, &m.links[0].copy_curve}) {
    ASSERT_EQ(curve->points.size(), 3u);
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_EQ(curve->points[i].first, sizes[i]);
      EXPECT_GT(curve->points[i].second, 0);
    }
  }
  for (double figure :
       {m.cpu.core_read_gbps, m.cpu.attention_gflops_per_core, m.cpu.dispatch_us,
        m.cpu.select_gelems_per_core, m.accelerator.memory_gbps, m.accelerator.tflops,
        m.accelerator.select_gelems, m.accelerator.gemm_gbps, m.links[0].h2d_gbps,
        m.links[0].d2h_gbps, m.links[0].latency_us, m.accelerator.launch_us, m.accelerator.sync_us})
    EXPECT_GT(figure, 0);
  EXPECT_NEAR(m.accelerator.select_gelems, 2 * m.cpu.select_gelems_per_core, 1e-12);
  EXPECT_EQ(m.cpu.core_read_gbps, m.cpu.read_curve.points.back().second);
  EXPECT_EQ(m.accelerator.memory_gbps, m.accelerator.memory_curve.points.back().second);

  ASSERT_EQ(said.size(), 6u);
  EXPECT_TRUE(starts_with(said[0], what + " per core (GB/s of KV by working set): 1 MiB "));
  EXPECT_TRUE(starts_with(said[1], "compute roof ")) << said[1];
  EXPECT_TRUE(starts_with(said[2], "selection ")) << said[2];
  EXPECT_TRUE(starts_with(said[3], "cpu accelerator: layer GEMV ")) << said[3];
  EXPECT_TRUE(starts_with(said[4], "cpu accelerator: a queued tiny op ")) << said[4];
  EXPECT_TRUE(starts_with(said[5], "cpu accelerator: copies ")) << said[5];
}

TEST(Calibrate, KeepsGivenFiguresUnlessOverwriting) {
  PlatformModel base;
  base.name = "given-machine";
  base.cpu.name = "given cpu";
  base.cpu.core_read_gbps = 123;
  base.sources["cpu.core_read_gbps"] = "given";
  base.accelerator.launch_us = 7;
  base.sources["accelerator.launch_us"] = "given";
  base.accelerator.memory_curve.points = {{1e6, 99}};
  base.sources["accelerator.memory_curve"] = "given";
  const PlatformModel kept = calibrate_this_machine(base, tiny_ladder(), false);
  EXPECT_EQ(kept.name, "given-machine");
  EXPECT_EQ(kept.cpu.name, "given cpu");
  EXPECT_EQ(kept.cpu.core_read_gbps, 123);
  EXPECT_EQ(kept.accelerator.launch_us, 7);
  EXPECT_EQ(kept.accelerator.memory_curve.points, base.accelerator.memory_curve.points);
  for (const char* key :
       {"cpu.core_read_gbps", "accelerator.launch_us", "accelerator.memory_curve"})
    EXPECT_EQ(kept.sources.at(key), "given") << key;
  EXPECT_GT(kept.cpu.attention_gflops_per_core, 0);  // what was missing is measured
  // Fields the calibration owns are set either way.
  EXPECT_EQ(kept.sources.at("cpu.cores"), "the sweep's host threads (1)");
  const PlatformModel over = calibrate_this_machine(base, tiny_ladder(), true);
  EXPECT_NE(over.cpu.core_read_gbps, 123);
  EXPECT_NE(over.sources.at("cpu.core_read_gbps"), "given");
  EXPECT_EQ(over.cpu.name, "given cpu");  // a name is never overwritten
}

}  // namespace
}  // namespace hb::model
