#pragma once
// A crafted model-mode report for the procurement tests: two platforms, whole-model blocks
// built from hand-picked step times (reports/whole_model.h), capacity rows.
#include <optional>
#include <string>
#include <vector>

#include "reports/report.h"
#include "reports/whole_model.h"

namespace hb::reports::testing {

// 80 layers and 1 ms outside them: ITL = 80 x step + 1 ms; tokens/s = batch / ITL.
inline Point wm_point(const std::string& platform, const std::string& strategy, int64_t seq_len,
                      int batch, double step_ns, double recall, std::optional<double> usd_per_hour,
                      std::optional<double> watts) {
  Point p;
  p.axes.model = "llama-3.1-70b";
  p.axes.family = "llama";
  p.axes.seq_len = seq_len;
  p.axes.batch = batch;
  p.axes.strategy = strategy;
  p.axes.kv_dtype = "fp16";
  p.axes.workload = "llama-like";
  p.axes.accelerator = "cuda";
  p.axes.decode_steps = 8;
  p.axes.page_tokens = 16;
  p.axes.extra["platform"] = platform;
  p.axes.extra["scope"] = "layer";
  p.axes.extra["microbatches"] = batch == 1 ? "1" : "2";  // as layer scope splits a batch
  p.role = role_from_name(strategy);
  p.provenance = Provenance::modeled;
  static_cast<Timing&>(p.step) = Timing::from_samples(std::vector<double>(6, step_ns));
  p.step.stop_reason = StopReason::max_steps;
  p.accuracy.steps_scored = 4;
  p.accuracy.mass_recall = recall;
  p.accuracy.cosine = 0.99;
  WholeModelInputs in;
  in.layers = 80;
  in.layer_step_ns = step_ns;
  in.batch = batch;
  in.outside_layers_ns = 1e6;
  in.usd_per_hour = usd_per_hour ? AcceleratorShare{usd_per_hour, "node price / 8 GPUs"}
                                 : AcceleratorShare::missing("no price: add economics");
  in.watts = watts ? AcceleratorShare{watts, "node power / 8 GPUs"}
                   : AcceleratorShare::missing("no power: " + platform +
                                               "'s profile has no economics.gpu_power_w");
  p.whole_model = make_whole_model(in);
  return p;
}

inline CapacityRow fit(CapacityKind kind, const std::string& platform, const std::string& strategy,
                       int batch, int64_t seq_len, const std::string& limit) {
  CapacityRow c;
  c.kind = kind;
  c.platform = platform;
  c.model = "llama-3.1-70b";
  c.kv_dtype = "fp16";
  c.strategy = strategy;
  c.batch = batch;
  c.seq_len = seq_len;
  c.limit = limit;
  return c;
}

// b200 ($10/h, 1000 W) and h200 ($8/h, no power figure) at 128k, batch 8:
//   full-gpu  b200 0.5 ms -> ITL 41 ms, 195.12 tokens/s, $14.236/Mtok, 0.19512 tokens/s/W
//             h200 0.6 ms -> ITL 49 ms, 163.27 tokens/s, $13.611/Mtok
//   offload   b200 2.0 ms -> 161 ms; h200 2.5 ms -> 201 ms
//   h2o       misses the target (recall 0.5) on both
// and b200 full-gpu also at 32k batch 8 (0.3 ms -> 25 ms) and 128k batch 1 (0.2 ms -> 17 ms).
inline Report procurement_report() {
  Report r;
  r.context.host = "build-vm";
  r.context.sweep["accuracy_target"] = "recall:0.9";
  struct Node {
    std::string name;
    double usd_per_hour, slowdown;
    std::optional<double> watts;
  };
  for (const Node& n : {Node{"b200", 10.0, 1.0, 1000.0}, Node{"h200", 8.0, 1.2, std::nullopt}}) {
    r.points.push_back(
        wm_point(n.name, "full-gpu", 131072, 8, 0.5e6 * n.slowdown, 1.0, n.usd_per_hour, n.watts));
    // offload: 2.0 ms on b200, 2.5 ms on h200
    r.points.push_back(wm_point(n.name, "offload", 131072, 8, n.name == "b200" ? 2.0e6 : 2.5e6, 1.0,
                                n.usd_per_hour, n.watts));
    r.points.push_back(wm_point(n.name, "h2o", 131072, 8, 0.3e6, 0.5, n.usd_per_hour, n.watts));
  }
  r.points.push_back(wm_point("b200", "full-gpu", 32768, 8, 0.3e6, 1.0, 10.0, 1000.0));
  r.points.push_back(wm_point("b200", "full-gpu", 131072, 1, 0.2e6, 1.0, 10.0, 1000.0));
  using K = CapacityKind;
  r.capacity = {fit(K::max_context, "b200", "full-gpu", 8, 262144, "accelerator: all KV ..."),
                fit(K::max_context, "h200", "full-gpu", 8, 196608, "accelerator: all KV ..."),
                fit(K::max_context, "b200", "offload", 8, 2097152, "local-dram: KV needs ..."),
                fit(K::max_context, "h200", "offload", 8, 1572864, "local-dram: KV needs ..."),
                fit(K::max_batch, "b200", "full-gpu", 10, 131072, "accelerator: all KV ...")};
  return r;
}

}  // namespace hb::reports::testing
