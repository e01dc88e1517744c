#pragma once
// Measures, on this machine, the figures a probe profile does not carry but the model needs to
// price a sweep that runs here, with the sweep's thread counts: decode attention (the sweep's
// first model shape and KV dtype) over a ladder of working sets, giving the CPU's read-bandwidth
// curve (caches included) and its compute roof (the smallest, cache-resident set); the same for
// the cpu accelerator's threads; its copy-bandwidth curve, launch and sync costs; the host pool's
// dispatch cost. Each figure is the 10th percentile of repeated runs (the least disturbed by other
// processes on a shared machine), each run with cold caches (a flush buffer is read before it),
// as the sweep's interleaved strategies find their KV. Microbenchmarks only: nothing here looks at
// a strategy's timing, so validate-model's error is a prediction error.
#include <functional>
#include <memory>
#include <string>

#include "core/shape.h"
#include "model/platform_model.h"

namespace hb::model {

struct CalibrationOptions {
  int host_threads = 1;         // threads of the strategies' host pool in the sweep
  int accelerator_threads = 1;  // cpu accelerator worker threads in the sweep
  int64_t accelerator_capacity_bytes = int64_t{2} << 30;
  AttentionShape shape;  // the sweep's first model and KV dtype
  int page_tokens = 16;
  // Working-set ladder for the bandwidth curves: min_bytes, doubling up to max_bytes (the last
  // point should be far beyond the caches: it stands for every larger working set).
  size_t min_bytes = size_t{512} << 10;
  size_t max_bytes = size_t{256} << 20;
  double seconds_per_figure = 0.15;
  size_t flush_bytes = size_t{128}
                       << 20;  // read before each repeat: larger than any last-level cache
};

// Completes `base` (tiers and CPU from a probe profile) for the cpu accelerator of this
// machine. Figures already present in `base` stay unless `overwrite`; the result's source is
// "calibrated". `progress` gets one line per figure.
PlatformModel calibrate_this_machine(PlatformModel base, const CalibrationOptions& opts,
                                     bool overwrite = true,
                                     const std::function<void(const std::string&)>& progress = {});

// The ceilings re-measured right now at one working set, one run each (validate-model's
// bracketing: on a shared machine the memory bandwidth left by other processes drifts by
// several times within minutes, so each measured step is priced with ceilings measured next to
// it). Same kernels as calibrate_this_machine; working sets beyond max_bytes are clamped.
class LiveCeilings {
 public:
  explicit LiveCeilings(const CalibrationOptions& opts);
  ~LiveCeilings();
  // `m` with one-point curves at this step's working sets (cpu, accelerator, copies), and the
  // GEMM rate re-measured when the step streamed layer weights.
  PlatformModel at(const PlatformModel& m, double cpu_bytes, double accelerator_bytes,
                   double copy_bytes, double weight_bytes = 0);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A model of this machine from a fresh quick `probe` (tiers, CPU) completed by calibration.
// `profile_json` (optional) receives the probe's platform document, for --write-model.
PlatformModel measure_this_machine(const CalibrationOptions& opts,
                                   const std::function<void(const std::string&)>& progress = {},
                                   std::string* profile_json = nullptr);

}  // namespace hb::model
