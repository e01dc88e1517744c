#pragma once
// `hybridbench run --mode model`: project a sweep onto platforms this machine is not. Each
// strategy really runs here (its selection logic on the real workload, so accuracy is real,
// and its exact per-step Traffic), on the cpu accelerator with the platform's per-layer KV
// budget and host tiers; its step pricer (model/step_pricer.h) then replaces each step's time
// with the modeled one (model/roofline.h) and labels the point "modeled" with the platform's name.
#include <memory>
#include <string>
#include <vector>

#include "model/platform_model.h"
#include "model/roofline.h"
#include "model/tensor_parallel.h"
#include "reports/report.h"
#include "bench/runner.h"

namespace hb::model {

// The profile's host tiers as plain host memory of this machine labelled with the tier's kind
// (emulated), fastest first: strategies place KV by the profile's tiers and their traffic
// names those kinds, which the model then prices with the profile's figures.
std::vector<HostTier> host_tiers_for(const PlatformModel& m);

// Runs `spec` on every platform (the model preset's weights set each platform's per-layer KV
// budget, unless spec.accelerator.capacity_bytes is given) and returns one report with every
// point; axes.extra["platform"] keeps the platforms' points apart, so speedups compare
// strategies on the same platform only. The sweep context lists the platforms and budgets.
// One sweep over the platforms as lanes (model/model_sweep.h): each workload and reference is
// made once, and a strategy that plans alike on several platforms executes once; the points are
// those of one sweep per platform. `requests`: --tp and the precisions (one lane per platform
// and precision; model/tensor_parallel.h); ignored (one GPU, fp16) with --accelerator-memory.
reports::Report run_model_sweep(const bench::ResolvedSweep& sweep,
                                const std::vector<PlatformModel>& platforms,
                                const bench::RunEnvironment& env,
                                const bench::ProgressFn& progress = {},
                                const std::vector<DeploymentRequest>& requests = {{}});
// run_model_sweep(spec.validate(), ...).
reports::Report run_model_sweep(const bench::SweepSpec& spec,
                                const std::vector<PlatformModel>& platforms,
                                const bench::RunEnvironment& env,
                                const bench::ProgressFn& progress = {},
                                const std::vector<DeploymentRequest>& requests = {{}});

}  // namespace hb::model
