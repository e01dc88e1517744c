// Roofline arithmetic on hand-computed cases, and how the overlap structure combines the
// resources (max inside a stage, sum across stages).
#include <gtest/gtest.h>

#include "core/error.h"
#include "core/overlap.h"
#include "model/roofline.h"

namespace hb::model {
namespace {

// Round numbers: 1 GB/s = 1 byte/ns.
PlatformModel toy() {
  PlatformModel m;
  m.name = "toy";
  m.origin = "test";
  m.accelerator = {{}, "G", 0,  0, int64_t{1} << 34, 0.9, 1000, 0.5, 10, 5, 10,
                   0,  {},  {}, 0};  // 500 GB/s effective, 10 TF
  m.links = {{0, 20, 10, 2, {}}};    // 20 up, 10 down, 2 us
  m.accelerator.kind = "cuda";
  m.cpu = {
      "C", 4, 10, 20,
      10,  0, {}};  // 4 cores x 10 GB/s, 20 GFLOP/s per core, 10 us dispatch; selection unpriced
  m.tiers = {{MemoryKind::local_dram, 0, "dram", int64_t{1} << 36, 30, 100, false},
             {MemoryKind::cxl, 2, "cxl", int64_t{1} << 36, 8, 250, false}};
  m.validate();
  return m;
}

constexpr int kCpu = 0, kAcc = 1;

TEST(Roofline, CpuIsTheSlowerOfMemoryAndComputePlusDispatch) {
  Traffic t;
  t.bytes_read[kCpu][int(MemoryKind::local_dram)] =
      1'000'000'000;  // / min(30, 4 x 10) GB/s = 33.33 ms
  t.cpu_flops = 1e9;  // / (4 x 20 GFLOP/s) = 12.5 ms
  ResourceTimes r = price_resources(t, toy());
  EXPECT_NEAR(r.terms.at("cpu.memory"), 1e9 / 30, 1);
  EXPECT_NEAR(r.terms.at("cpu.compute"), 12.5e6, 1);
  EXPECT_NEAR(r.cpu_ns, 1e9 / 30 + 10e3, 1);
  // Compute-bound: 4e9 flops = 50 ms > 33.3 ms.
  t.cpu_flops = 4e9;
  EXPECT_NEAR(price_resources(t, toy()).cpu_ns, 50e6 + 10e3, 1);
  // One core: the per-core bandwidth (10 GB/s) is the roof, not the tier (30 GB/s).
  PlatformModel one = toy();
  one.cpu.cores = 1;
  t.cpu_flops = 0;
  EXPECT_NEAR(price_resources(t, one).cpu_ns, 100e6 + 10e3, 1);
  // Tiers are read one after another at their own bandwidth: + 0.8 GB from CXL at 8 GB/s.
  t.bytes_read[kCpu][int(MemoryKind::cxl)] = 800'000'000;
  t.bytes_written[kCpu][int(MemoryKind::local_dram)] = 300'000'000;  // writes priced like reads
  EXPECT_NEAR(price_resources(t, toy()).cpu_ns, 1.3e9 / 30 + 100e6 + 10e3, 1);
  // No CPU work at all: no dispatch either.
  EXPECT_EQ(price_resources(Traffic{}, toy()).cpu_ns, 0);
}

TEST(Roofline, AcceleratorUsesEfficiencyComputeRoofAndLaunches) {
  Traffic t;
  t.bytes_read[kAcc][int(MemoryKind::accelerator)] = 900'000'000;
  t.bytes_written[kAcc][int(MemoryKind::accelerator)] = 100'000'000;  // 1 GB / 500 GB/s = 2 ms
  t.accelerator_flops = 1e10;                                         // / 10 TF = 1 ms
  t.kernel_launches = 3;
  const ResourceTimes r = price_resources(t, toy());
  EXPECT_NEAR(r.terms.at("accelerator.memory"), 2e6, 1e-3);
  EXPECT_NEAR(r.terms.at("accelerator.compute"), 1e6, 1e-3);
  EXPECT_NEAR(r.accelerator_ns, 2e6 + 15e3, 1e-3);
  t.accelerator_flops = 1e11;  // 10 ms: compute-bound
  EXPECT_NEAR(price_resources(t, toy()).accelerator_ns, 10e6 + 15e3, 1e-3);
}

// Issue 18 part 4: the layer's weights (a subset of the accelerator's reads) stream at the
// GEMMs' own rate where the profile has one, the KV at the memory roof; without a rate they are
// memory traffic like the rest (the presets), so older profiles price as before.
TEST(Roofline, LayerWeightsStreamAtTheGemmRate) {
  Traffic t;
  t.bytes_read[kAcc][int(MemoryKind::accelerator)] = 1'500'000'000;  // 1 GB of it weights
  t.weight_bytes = 1'000'000'000;
  PlatformModel m = toy();
  EXPECT_NEAR(price_resources(t, m).accelerator_ns, 3e6, 1);  // 1.5 GB / 500 GB/s
  m.accelerator.gemm_gbps = 250;
  const ResourceTimes r = price_resources(t, m);
  EXPECT_NEAR(r.terms.at("accelerator.gemm"), 4e6, 1);          // 1 GB / 250 GB/s
  EXPECT_NEAR(r.terms.at("accelerator.memory"), 1e6 + 4e6, 1);  // + 0.5 GB of KV at 500
  EXPECT_NEAR(r.accelerator_ns, 5e6, 1);
  t.accelerator_flops = 1e11;  // 10 ms at 10 TF: the compute roof still binds over both
  EXPECT_NEAR(price_resources(t, m).accelerator_ns, 10e6, 1);
  m.accelerator.gemm_gbps = -1;
  EXPECT_THROW(m.validate(), Error);
}

TEST(Roofline, SelectionAddsToTheRoofsAtItsRate) {
  Traffic t;
  t.bytes_read[kCpu][int(MemoryKind::local_dram)] = 30'000'000;    // 1 ms at 30 GB/s
  t.select(Processor::cpu, 2e6);                                   // / (4 cores x 0.5 G/s) = 1 ms
  t.bytes_read[kAcc][int(MemoryKind::accelerator)] = 500'000'000;  // 1 ms at 500 GB/s effective
  t.select(Processor::accelerator, 4e6);                           // / 20 G/s = 0.2 ms
  PlatformModel m = toy();
  // Unpriced while the profile gives no rate (older profiles): only the roofs.
  EXPECT_NEAR(price_resources(t, m).cpu_ns, 1e6 + 10e3, 1);
  EXPECT_NEAR(price_resources(t, m).accelerator_ns, 1e6, 1);
  m.cpu.select_gelems_per_core = 0.5;
  m.accelerator.select_gelems = 20;
  const ResourceTimes r = price_resources(t, m);
  EXPECT_NEAR(r.terms.at("cpu.select"), 1e6, 1);
  EXPECT_NEAR(r.cpu_ns, 2e6 + 10e3, 1);  // added to the memory roof, not hidden under it
  EXPECT_NEAR(r.terms.at("accelerator.select"), 0.2e6, 1);
  EXPECT_NEAR(r.accelerator_ns, 1.2e6, 1);
  // Selection alone is CPU work: it pays the dispatch.
  Traffic only;
  only.select(Processor::cpu, 2e6);
  EXPECT_NEAR(price_resources(only, m).cpu_ns, 1e6 + 10e3, 1);
  m.cpu.select_gelems_per_core = -1;
  EXPECT_THROW(m.validate(), Error);
}

TEST(Roofline, TransferPerDirectionAndCappedBySourceTier) {
  Traffic t;
  t.h2d_bytes = 400'000'000;  // / 20 GB/s = 20 ms
  t.d2h_bytes = 100'000'000;  // / 10 GB/s = 10 ms
  ResourceTimes r = price_resources(t, toy());
  EXPECT_NEAR(r.transfer_ns, 20e6 + 10e6 + 2 * 2e3, 1e-3);
  // The accelerator pulls 0.4 GB straight out of CXL (8 GB/s < 20 GB/s link): 50 ms.
  t.bytes_read[kAcc][int(MemoryKind::cxl)] = 400'000'000;
  r = price_resources(t, toy());
  EXPECT_NEAR(r.terms.at("transfer.h2d"), 50e6, 1e-3);
  // ... but from local DRAM (30 GB/s) the link (20 GB/s) stays the bottleneck.
  t.bytes_read[kAcc][int(MemoryKind::cxl)] = 0;
  t.bytes_read[kAcc][int(MemoryKind::local_dram)] = 400'000'000;
  EXPECT_NEAR(price_resources(t, toy()).terms.at("transfer.h2d"), 20e6, 1e-3);
  // Only one direction used: one latency.
  Traffic d;
  d.d2h_bytes = 10'000;
  EXPECT_NEAR(price_resources(d, toy()).transfer_ns, 1e3 + 2e3, 1e-6);
}

TEST(Roofline, SyncsAndMissingTiers) {
  Traffic t;
  t.syncs = 3;
  EXPECT_NEAR(price_resources(t, toy()).sync_ns, 30e3, 1e-6);
  t.bytes_read[kCpu][int(MemoryKind::remote_dram)] = 1;
  try {
    price_resources(t, toy());
    FAIL() << "remote-dram is not a tier of toy";
  } catch (const Error& e) {
    EXPECT_NE(e.problem().find("no remote-dram tier"), std::string::npos) << e.problem();
  }
}

TEST(Roofline, MeasuredCurvesReplaceTheFlatRoofs) {
  const BandwidthCurve c{{{1e6, 40}, {4e6, 10}}};
  EXPECT_DOUBLE_EQ(c.at(5e5), 40);  // ends hold outside the points
  EXPECT_DOUBLE_EQ(c.at(1e7), 10);
  EXPECT_NEAR(c.at(2e6), 16, 1e-9);  // halfway in log(bytes): time per byte (1/40 + 1/10) / 2
  PlatformModel m = toy();
  m.cpu.read_curve = c;
  m.cpu.cores = 2;
  Traffic t;
  t.bytes_read[kCpu][int(MemoryKind::local_dram)] = 2'000'000;  // working set 2 MB: 2 x 16 GB/s
  EXPECT_NEAR(price_resources(t, m).cpu_ns, 2e6 / 32 + 10e3, 1e-6);
  // Bytes on another tier keep that tier's roof, but count in the working set: 4 MB -> 10 GB/s.
  t.bytes_read[kCpu][int(MemoryKind::cxl)] = 2'000'000;
  EXPECT_NEAR(price_resources(t, m).cpu_ns, 2e6 / 20 + 2e6 / 8 + 10e3, 1e-6);
  // The accelerator's curve replaces memory_gbps x efficiency; the link's replaces h2d/d2h.
  m.accelerator.memory_curve = c;
  m.links[0].copy_curve = c;
  Traffic a;
  a.bytes_read[kAcc][int(MemoryKind::accelerator)] = 4'000'000;  // 10 GB/s
  a.h2d_bytes = 1'000'000;                                       // 40 GB/s
  const ResourceTimes r = price_resources(a, m);
  EXPECT_NEAR(r.accelerator_ns, 4e5, 1e-6);
  EXPECT_NEAR(r.transfer_ns, 1e6 / 40 + 2e3, 1e-6);
}

TEST(Overlap, MaxWithinAStageSumAcrossStages) {
  ResourceTimes r;
  r.cpu_ns = 100;
  r.accelerator_ns = 70;
  r.transfer_ns = 20;
  r.sync_ns = 5;
  const ModeledStep serial = combine(r, OverlapStructure::serial());
  EXPECT_DOUBLE_EQ(serial.total_ns, 195);
  const ModeledStep par = combine(r, OverlapStructure::parse("cpu|accelerator > transfer > sync"));
  EXPECT_DOUBLE_EQ(par.total_ns, 100 + 20 + 5);
  EXPECT_EQ(par.overlap, "cpu|accelerator > transfer > sync");
  EXPECT_DOUBLE_EQ(par.phase_ns.at("accelerator"), 70);  // phases keep each resource's own time
  // The accelerator now dominates its stage.
  r.accelerator_ns = 150;
  EXPECT_DOUBLE_EQ(
      combine(r, OverlapStructure::parse("cpu|accelerator > transfer > sync")).total_ns, 175);
  // Pipelined offload: copy and attention in one stage.
  EXPECT_DOUBLE_EQ(
      combine(r, OverlapStructure::parse("transfer|accelerator > cpu > sync")).total_ns,
      150 + 100 + 5);
  // Everything in one stage: the slowest resource.
  EXPECT_DOUBLE_EQ(combine(r, OverlapStructure::parse("cpu|accelerator|transfer|sync")).total_ns,
                   150);
  // A resource the structure forgets still costs its time, after the named stages.
  const ModeledStep forgot = combine(r, OverlapStructure::parse("cpu|accelerator"));
  EXPECT_DOUBLE_EQ(forgot.total_ns, 150 + 20 + 5);
  EXPECT_EQ(forgot.overlap, "cpu|accelerator > transfer > sync");
  // Undeclared = serial.
  EXPECT_DOUBLE_EQ(combine(r, OverlapStructure{}).total_ns, 275);
  // Resources without work are not phases.
  ResourceTimes only_cpu;
  only_cpu.cpu_ns = 7;
  EXPECT_EQ(combine(only_cpu, OverlapStructure::serial()).phase_ns.size(), 1u);
}

TEST(Overlap, TextFormParsesAndRejectsMistakes) {
  const auto o = OverlapStructure::parse(" cpu | accelerator >transfer> sync ");
  ASSERT_EQ(o.stages.size(), 3u);
  EXPECT_EQ(o.stages[0], (std::vector<Resource>{Resource::cpu, Resource::accelerator}));
  EXPECT_EQ(o.to_string(), "cpu|accelerator > transfer > sync");
  EXPECT_EQ(OverlapStructure::parse(o.to_string()), o);
  EXPECT_THROW(OverlapStructure::parse("cpu > gpu"), Error);
  EXPECT_THROW(OverlapStructure::parse("cpu > cpu"), Error);
  EXPECT_THROW(OverlapStructure::parse("cpu > > sync"), Error);
  EXPECT_THROW(OverlapStructure::parse(""), Error);
}

TEST(Overlap, DeclaredBeatsSerial) {
  std::string from;
  const auto declared = OverlapStructure::parse("accelerator > cpu");
  EXPECT_EQ(overlap_for(declared, &from), declared);
  EXPECT_EQ(from, "declared");
  EXPECT_EQ(overlap_for({}, &from), OverlapStructure::serial());
  EXPECT_EQ(from, "default");
}

TEST(Roofline, ModelStepPricesThenCombines) {
  // cpu-only at 32K tokens of llama-3.1-8b on toy: 128 MiB of KV read by 4 cores.
  Traffic t;
  const int64_t kv = int64_t{32768} * 4096;
  t.bytes_read[kCpu][int(MemoryKind::local_dram)] = kv;
  t.cpu_flops = 4.0 * 32 * 128 * 32768;
  t.d2h_bytes = 32 * 128 * 4 + 2 * 8 * 128 * 4;
  t.h2d_bytes = 32 * 128 * 4;
  t.syncs = 2;
  const ModeledStep s = model_step(t, OverlapStructure::serial(), toy());
  const double cpu = std::max(kv / 30.0, t.cpu_flops / 80.0) + 10e3;
  const double xfer = t.h2d_bytes / 20.0 + t.d2h_bytes / 10.0 + 4e3;
  EXPECT_NEAR(s.total_ns, cpu + xfer + 20e3, 1e-3);
  EXPECT_NEAR(s.phase_ns.at("cpu"), cpu, 1e-3);
  EXPECT_EQ(s.phase_ns.count("accelerator"), 0u);
}

}  // namespace
}  // namespace hb::model
