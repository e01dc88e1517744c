#include "model/roofline.h"

#include <algorithm>
#include <set>

#include "core/error.h"

namespace hb::model {

double ResourceTimes::of(Resource r) const {
  switch (r) {
    case Resource::cpu:
      return cpu_ns;
    case Resource::accelerator:
      return accelerator_ns;
    case Resource::transfer:
      return transfer_ns;
    case Resource::sync:
      return sync_ns;
  }
  throw Error("resource value " + std::to_string(static_cast<int>(r)) + " is out of range",
              "a bug: report it");
}

namespace {

bool is_host_kind(int k) { return static_cast<MemoryKind>(k) != MemoryKind::accelerator; }

const TierModel& tier_for(const PlatformModel& m, int k) {
  const TierModel* t = m.tier(static_cast<MemoryKind>(k));
  if (!t)
    throw Error("platform '" + m.name + "' has no " +
                    std::string(memory_kind_name(static_cast<MemoryKind>(k))) +
                    " tier, but the step moved bytes there",
                "add that tier to the profile (" + m.origin +
                    "), or run the strategy with the profile's tiers");
  return *t;
}

// bytes / (GB/s) in ns: 1e9 B/s = 1 B/ns.
double ns_of(double bytes, double gbps) { return gbps > 0 ? bytes / gbps : 0.0; }

constexpr int kCpu = static_cast<int>(Processor::cpu);
constexpr int kAcc = static_cast<int>(Processor::accelerator);

// The cpu: memory roof per tier (streams one after another), compute roof, selection, dispatch.
void price_cpu(const Traffic& t, const PlatformModel& m, ResourceTimes& r) {
  const double cores = std::max(1, m.cpu.cores);
  double cpu_mem = 0, cpu_ws = 0;
  bool cpu_work = t.cpu_flops > 0;
  for (int k = 0; k < kMemoryKinds; ++k)
    cpu_ws += static_cast<double>(t.bytes_read[kCpu][k] + t.bytes_written[kCpu][k]);
  const TierModel& tier0 = m.tiers.at(0);
  for (int k = 0; k < kMemoryKinds; ++k) {
    const double bytes = static_cast<double>(t.bytes_read[kCpu][k] + t.bytes_written[kCpu][k]);
    if (bytes <= 0) continue;
    cpu_work = true;
    // A CPU read of accelerator memory only happens where the host addresses it (the cpu
    // accelerator); price it as the default host tier.
    const TierModel& tier = is_host_kind(k) ? tier_for(m, k) : m.tiers.at(0);
    // With a measured curve, bytes of the tier it was measured on go at the curve's bandwidth
    // for this step's working set (it includes that tier's limit and the caches).
    const double bw = (&tier == &tier0 && !m.cpu.read_curve.empty())
                          ? cores * m.cpu.read_curve.at(cpu_ws)
                          : std::min(tier.read_gbps, cores * m.cpu.core_read_gbps);
    cpu_mem += ns_of(bytes, bw);
  }
  r.terms["cpu.working_set"] = cpu_ws;
  const double cpu_compute = m.cpu.attention_gflops_per_core > 0
                                 ? t.cpu_flops / (cores * m.cpu.attention_gflops_per_core)
                                 : 0.0;
  // Selection is branchy scalar work beside the streaming roofs, so it adds to them (1e9/s = 1/ns).
  const double cpu_select_n = t.select_elements[kCpu];
  const double cpu_select = m.cpu.select_gelems_per_core > 0
                                ? cpu_select_n / (cores * m.cpu.select_gelems_per_core)
                                : 0.0;
  cpu_work = cpu_work || cpu_select_n > 0;
  const double dispatch = cpu_work ? m.cpu.dispatch_us * 1e3 : 0.0;
  r.terms["cpu.memory"] = cpu_mem;
  r.terms["cpu.compute"] = cpu_compute;
  r.terms["cpu.select"] = cpu_select;
  r.terms["cpu.dispatch"] = dispatch;
  r.cpu_ns = std::max(cpu_mem, cpu_compute) + cpu_select + dispatch;
}

// The accelerator: its own memory (reads of host kinds are link traffic, priced apart).
void price_accelerator(const Traffic& t, const PlatformModel& m, ResourceTimes& r) {
  const auto& a = m.accelerator;
  const double all_bytes = static_cast<double>(t.bytes_read[kAcc][int(MemoryKind::accelerator)] +
                                               t.bytes_written[kAcc][int(MemoryKind::accelerator)]);
  // The layer's weights at the GEMMs' own rate where the profile has one (decode GEMMs run
  // apart from attention, one after the other on the queue), the rest at the memory roof.
  const double weights = a.gemm_gbps > 0 ? static_cast<double>(t.weight_bytes) : 0.0;
  const double hbm_bytes = std::max(0.0, all_bytes - weights);
  const double acc_bw = a.memory_curve.empty() ? a.memory_gbps * a.attention_efficiency
                                               : a.memory_curve.at(hbm_bytes);
  const double gemm = weights > 0 ? ns_of(weights, a.gemm_gbps) : 0.0;
  const double acc_mem = ns_of(hbm_bytes, acc_bw) + gemm;
  const double acc_compute = a.tflops > 0 ? t.accelerator_flops / (a.tflops * 1e3) : 0.0;
  const double launch = static_cast<double>(t.kernel_launches) * a.launch_us * 1e3;
  const double acc_select = a.select_gelems > 0 ? t.select_elements[kAcc] / a.select_gelems : 0.0;
  r.terms["accelerator.memory"] = acc_mem;
  r.terms["accelerator.gemm"] = gemm;
  r.terms["accelerator.compute"] = acc_compute;
  r.terms["accelerator.select"] = acc_select;
  r.terms["accelerator.launch"] = launch;
  r.accelerator_ns = std::max(acc_mem, acc_compute) + acc_select + launch;
}

// Transfers: host -> accelerator bytes the accelerator pulled straight from a host tier go no
// faster than that tier; the rest (staged copies) at link speed.
void price_transfer(const Traffic& t, const PlatformModel& m, ResourceTimes& r) {
  const LinkModel& link = m.link();
  double h2d = 0, direct = 0;
  for (int k = 0; k < kMemoryKinds; ++k) {
    if (!is_host_kind(k)) continue;
    const double bytes = static_cast<double>(t.bytes_read[kAcc][k]);
    if (bytes <= 0) continue;
    const double capped = std::min(bytes, static_cast<double>(t.h2d_bytes) - direct);
    if (capped <= 0) break;
    h2d += ns_of(capped, std::min(link.h2d_gbps, tier_for(m, k).read_gbps));
    direct += capped;
  }
  h2d += ns_of(std::max(0.0, static_cast<double>(t.h2d_bytes) - direct), link.h2d_gbps);
  double d2h = ns_of(static_cast<double>(t.d2h_bytes), link.d2h_gbps);
  if (!link.copy_curve.empty()) {  // copies a cache can serve (the cpu accelerator's memcpy)
    const double bw = link.copy_curve.at(static_cast<double>(t.h2d_bytes + t.d2h_bytes));
    h2d = ns_of(static_cast<double>(t.h2d_bytes), bw);
    d2h = ns_of(static_cast<double>(t.d2h_bytes), bw);
  }
  const double lat = ((t.h2d_bytes > 0) + (t.d2h_bytes > 0)) * link.latency_us * 1e3;
  r.terms["transfer.h2d"] = h2d;
  r.terms["transfer.d2h"] = d2h;
  r.terms["transfer.latency"] = lat;
  r.transfer_ns = h2d + d2h + lat;
}

}  // namespace

ResourceTimes price_resources(const Traffic& t, const PlatformModel& m) {
  ResourceTimes r;
  price_cpu(t, m, r);
  price_accelerator(t, m, r);
  price_transfer(t, m, r);
  r.sync_ns = static_cast<double>(t.syncs) * m.accelerator.sync_us * 1e3;
  return r;
}

ModeledStep combine(const ResourceTimes& r, const OverlapStructure& o) {
  ModeledStep s;
  OverlapStructure used = o.declared() ? o : OverlapStructure::serial();
  std::set<Resource> named;
  for (const auto& st : used.stages)
    for (const Resource x : st) named.insert(x);
  // Work the structure forgot still takes time: each such resource runs on its own.
  for (const Resource x :
       {Resource::transfer, Resource::cpu, Resource::accelerator, Resource::sync})
    if (!named.count(x) && r.of(x) > 0) used.stages.push_back({x});
  for (const auto& st : used.stages) {
    double longest = 0;
    for (const Resource x : st) {
      const double v = r.of(x);
      if (v > 0) s.phase_ns[kResources.name(x)] = v;
      longest = std::max(longest, v);
    }
    s.total_ns += longest;
  }
  s.overlap = used.to_string();
  return s;
}

ModeledStep model_step(const Traffic& t, const OverlapStructure& o, const PlatformModel& m) {
  ModeledStep s = combine(price_resources(t, m), o);
  // Step times become whole nanoseconds (int64) downstream: a price beyond a day (validate()'s
  // ranges keep every real sweep far below it) is refused rather than cast into a negative time.
  constexpr double kMaxStepNs = 86400e9;
  if (!(s.total_ns >= 0 && s.total_ns <= kMaxStepNs))
    throw Error("platform '" + m.name + "' (" + m.origin + ") prices a decode step at " +
                    std::to_string(s.total_ns / 1e9) + " s, more than a day",
                "check its figures (bandwidths in GB/s, latencies in us; ranges in "
                "model/README.md)");
  return s;
}

OverlapStructure overlap_for(const OverlapStructure& declared, std::string* from) {
  auto say = [&](const char* w) {
    if (from) *from = w;
  };
  if (declared.declared()) {
    say("declared");
    return declared;
  }
  // A strategy that declares nothing waits for each part before the next (true of every step
  // whose code has no concurrency), so serial is exact for it, not just conservative.
  say("default");
  return OverlapStructure::serial();
}

}  // namespace hb::model
