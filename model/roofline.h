#pragma once
// The projection model: a decode step's exact Traffic (core/traffic.h) priced per resource
// with a roofline, then combined by the strategy's overlap structure (core/overlap.h).
//   cpu          max(sum over host tiers of bytes / min(tier read bandwidth, cores x per-core
//                bandwidth), cpu flops / (cores x per-core attention flops)) + dispatch
//   accelerator  max(accelerator-memory bytes / (memory bandwidth x attention efficiency),
//                accelerator flops / compute roof) + launches x launch overhead
//   transfer     per direction: bytes / link bandwidth (host-tier bytes the accelerator reads
//                directly are capped by that tier's bandwidth) + latency per direction used
//   sync         syncs x sync overhead
// A stage of the overlap structure lasts as long as its slowest resource; stages add up; a
// resource with work that the structure does not name is appended as a stage of its own.
// Optional measured bandwidth curves (platform_model.h: BandwidthCurve) replace the flat memory
// and copy roofs by the step's working set.
#include <map>
#include <string>

#include "core/overlap.h"
#include "core/traffic.h"
#include "model/platform_model.h"

namespace hb::model {

struct ResourceTimes {
  double cpu_ns = 0, accelerator_ns = 0, transfer_ns = 0, sync_ns = 0;
  // Roofline terms behind them: "cpu.memory", "cpu.compute", "cpu.dispatch",
  // "accelerator.memory", "accelerator.compute", "accelerator.launch", "transfer.h2d",
  // "transfer.d2h", "transfer.latency".
  std::map<std::string, double> terms;
  double of(Resource resource) const;
};

struct ModeledStep {
  double total_ns = 0;
  std::map<std::string, double>
      phase_ns;         // one per resource with work: cpu, accelerator, transfer, sync
  std::string overlap;  // the structure used, in text form
};

// Throws hb::Error when the traffic uses a host memory kind the platform has no tier for.
ResourceTimes price_resources(const Traffic& t, const PlatformModel& m);
ModeledStep combine(const ResourceTimes& r, const OverlapStructure& o);
ModeledStep model_step(const Traffic& t, const OverlapStructure& o, const PlatformModel& m);

// The structure the model uses for a strategy: its own declaration (Strategy::overlap()) when
// it makes one, otherwise serial. `from` says which ("declared", "default").
OverlapStructure overlap_for(const OverlapStructure& declared, std::string* from = nullptr);

}  // namespace hb::model
