#include "model/validate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/phase_names.h"
#include "core/stats.h"
#include "model/model_run.h"
#include "model/roofline.h"
#include "model/step_pricer.h"

namespace hb::model {

namespace {

struct Collected {
  std::vector<double> total, total_static;
  std::map<std::string, std::vector<double>> phases;
  std::string overlap, error;
};

double median(const std::vector<double>& v) { return v.empty() ? 0.0 : summarize(v).median; }

std::string ms_text(double ns) {
  char b[32];
  if (ns >= 1e6)
    std::snprintf(b, sizeof b, "%.3f ms", ns / 1e6);
  else
    std::snprintf(b, sizeof b, "%.1f us", ns / 1e3);
  return b;
}

std::string pct(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%+.1f%%", 100 * x);
  return b;
}

using CollectedByPoint = std::map<std::string, Collected>;

// The step priced with ceilings re-measured right now at this step's working sets.
ModeledStep live_step(const Traffic& t, const OverlapStructure& o, const PlatformModel& m,
                      LiveCeilings& live) {
  double cpu_ws = 0;
  for (int k = 0; k < kMemoryKinds; ++k)
    cpu_ws += static_cast<double>(t.bytes_read[0][k] + t.bytes_written[0][k]);
  // The weights are priced at the GEMM rate where the profile has one, the rest (KV) at the
  // attention curve of its own working set (roofline.cpp).
  const double weights = m.accelerator.gemm_gbps > 0 ? static_cast<double>(t.weight_bytes) : 0;
  const double acc_ws = static_cast<double>(t.bytes_read[1][int(MemoryKind::accelerator)] +
                                            t.bytes_written[1][int(MemoryKind::accelerator)]) -
                        weights;
  return model_step(
      t, o, live.at(m, cpu_ws, acc_ws, static_cast<double>(t.h2d_bytes + t.d2h_bytes), weights));
}

// The step pricer the measured sweep runs with: it prices every timed step and keeps the
// prices per point in `collected`, leaving the measurement as it is.
std::shared_ptr<const bench::StepObserver> pricing_model(
    const PlatformModel& m, int warmup, std::shared_ptr<CollectedByPoint> collected,
    std::shared_ptr<LiveCeilings> live) {
  PricerOptions o;
  o.replace = false;  // the run stays a measurement; the model only prices its steps
  o.annotate = false;
  o.price = [collected, warmup, m, live](const reports::PointAxes& axes, const Strategy& s,
                                         int step, const Traffic& traffic) {
    Collected& c = (*collected)[axes.key()];
    if (step < warmup || !c.error.empty()) return StepPrice{};
    try {
      const OverlapStructure o = overlap_for(s.overlap());
      const ModeledStep fixed = model_step(traffic, o, m);
      c.total_static.push_back(fixed.total_ns);
      const ModeledStep ms = live ? live_step(traffic, o, m, *live) : fixed;
      c.total.push_back(ms.total_ns);
      for (const auto& [k, v] : ms.phase_ns) c.phases[k].push_back(v);
      c.overlap = ms.overlap;
      return StepPrice{ms.total_ns, ms.phase_ns, ms.overlap};
    } catch (const Error& e) {
      c.error = e.problem();  // a pricing problem must not turn the measurement into an error
      return StepPrice{};
    }
  };
  return make_step_pricer(m, std::move(o));
}

// A measured point next to its prices: an error point when a timed point got none.
ValidationPoint compare_point(const reports::Point& p, const CollectedByPoint& collected) {
  ValidationPoint vp;
  vp.axes = p.axes;
  vp.status = p.status;
  vp.reason = p.reason;
  const auto it = collected.find(p.axes.key());
  if (p.timed() && (it == collected.end() || it->second.total.empty())) {
    vp.status = reports::PointStatus::error;
    vp.reason = it == collected.end() || it->second.error.empty() ? "no step was priced"
                                                                  : "model: " + it->second.error;
  }
  if (vp.status != reports::PointStatus::ok || !p.timed()) return vp;
  const Collected& c = it->second;
  vp.measured_ns = p.step.summary.median;
  vp.measured_p10_ns = p.step.summary.p10;
  vp.measured_noise = robust_rel_noise(p.step.summary);
  vp.modeled_ns = median(c.total);
  vp.error = vp.measured_ns > 0 ? (vp.modeled_ns - vp.measured_ns) / vp.measured_ns : 0;
  vp.error_p10 =
      vp.measured_p10_ns > 0 ? (vp.modeled_ns - vp.measured_p10_ns) / vp.measured_p10_ns : 0;
  vp.modeled_static_ns = median(c.total_static);
  vp.error_static =
      vp.measured_ns > 0 ? (vp.modeled_static_ns - vp.measured_ns) / vp.measured_ns : 0;
  for (const auto& [k, t] : p.phases) vp.measured_phases[k] = t.summary.median;
  for (const auto& [k, s] : c.phases) vp.modeled_phases[k] = median(s);
  vp.overlap = c.overlap;
  return vp;
}

// Per strategy: error sums over its compared points (means taken in finish()), and whether the
// model found every one of them CPU-bound.
struct StrategyErrors {
  std::map<std::string, StrategyError> per;
  std::map<std::string, bool> all_cpu;

  void add(const ValidationPoint& vp) {
    StrategyError& se = per[vp.axes.strategy];
    se.strategy = vp.axes.strategy;
    se.points++;
    se.mean_abs_error += std::abs(vp.error);
    se.mean_error += vp.error;
    se.max_abs_error = std::max(se.max_abs_error, std::abs(vp.error));
    se.mean_abs_error_p10 += std::abs(vp.error_p10);
    se.mean_abs_error_static += std::abs(vp.error_static);
    se.max_abs_error_static = std::max(se.max_abs_error_static, std::abs(vp.error_static));
    se.max_abs_error_p10 = std::max(se.max_abs_error_p10, std::abs(vp.error_p10));
    const auto cpu = vp.modeled_phases.find(phase::kCpu);
    const bool cb = cpu != vp.modeled_phases.end() && cpu->second >= 0.5 * vp.modeled_ns;
    all_cpu[se.strategy] = all_cpu.count(se.strategy) ? all_cpu[se.strategy] && cb : cb;
  }
  std::vector<StrategyError> finish() {
    std::vector<StrategyError> out;
    for (auto& [name, se] : per) {
      se.mean_abs_error /= se.points;
      se.mean_abs_error_p10 /= se.points;
      se.mean_abs_error_static /= se.points;
      se.mean_error /= se.points;
      se.cpu_bound = all_cpu[name];
      out.push_back(se);
    }
    return out;
  }
};

}  // namespace

Validation validate_model(const bench::ResolvedSweep& sweep, const bench::RunEnvironment& env,
                          const PlatformModel& m, const bench::ProgressFn& progress,
                          const CalibrationOptions* live_opts) {
  m.validate();
  std::shared_ptr<LiveCeilings> live =
      live_opts ? std::make_shared<LiveCeilings>(*live_opts) : nullptr;
  auto collected = std::make_shared<CollectedByPoint>();
  bench::RunEnvironment e = env;
  e.observer = pricing_model(m, sweep.spec.stop.warmup_steps, collected, live);

  Validation v;
  v.platform = m;
  v.live = live != nullptr;
  v.measured = bench::run_sweep(sweep, e, progress);
  StrategyErrors errors;
  for (const auto& p : v.measured.points) {
    ValidationPoint vp = compare_point(p, *collected);
    if (vp.status == reports::PointStatus::ok && p.timed()) errors.add(vp);
    v.points.push_back(std::move(vp));
  }
  v.strategies = errors.finish();
  return v;
}

bool goal_met(const Validation& v, double goal) {
  for (const auto& e : v.strategies)
    if (e.cpu_bound && e.max_abs_error > goal) return false;
  return true;
}

std::string validation_text(const Validation& v, double goal) {
  std::string s;
  char b[640];
  s += "Model validation: measured on this machine vs modeled from each measured step's traffic\n";
  s += "platform " + v.platform.name + " (" + to_string(v.platform.source) + ", " +
       v.platform.origin + ")\n";
  s += "error = (modeled - measured) / measured, medians over the timed steps; noise = IQR / "
       "1.349 median of the measured steps (as in report and compare)\n";
  s += v.live ? "modeled: ceilings re-measured next to each step (live); err static: ceilings "
                "calibrated once before the sweep\n\n"
              : "modeled: ceilings calibrated once before the sweep\n\n";
  std::snprintf(b, sizeof b, "%-18s %8s %5s %12s %12s %8s %7s %9s  %s\n", "strategy", "seq_len",
                "batch", "measured", "modeled", "error", "noise", v.live ? "err static" : "",
                "modeled phases");
  s += b;
  for (const auto& p : v.points) {
    if (p.status != reports::PointStatus::ok) {
      std::snprintf(b, sizeof b, "%-18s %8lld %5d %12s %12s %8s %7s %9s  %s: %s\n",
                    p.axes.strategy.c_str(), static_cast<long long>(p.axes.seq_len), p.axes.batch,
                    "-", "-", "-", "-", "", to_string(p.status), p.reason.c_str());
      s += b;
      continue;
    }
    std::string ph;
    for (const auto& [k, ns] : p.modeled_phases)
      ph += (ph.empty() ? "" : ", ") + k + " " + ms_text(ns);
    std::snprintf(b, sizeof b, "%-18s %8lld %5d %12s %12s %8s %6.1f%% %9s  %s\n",
                  p.axes.strategy.c_str(), static_cast<long long>(p.axes.seq_len), p.axes.batch,
                  ms_text(p.measured_ns).c_str(), ms_text(p.modeled_ns).c_str(),
                  pct(p.error).c_str(), 100 * p.measured_noise,
                  v.live ? pct(p.error_static).c_str() : "", ph.c_str());
    s += b;
  }
  s += "\nPer strategy:\n";
  std::snprintf(b, sizeof b, "%-18s %6s %11s %11s %11s %14s  %s\n", "strategy", "points",
                "mean |err|", "max |err|", "mean err", v.live ? "max |e static|" : "", "cpu-bound");
  s += b;
  std::vector<std::string> goal_names;
  double goal_max = 0;
  for (const auto& e : v.strategies) {
    const std::string st = v.live ? pct(e.max_abs_error_static).substr(1) : "";
    std::snprintf(b, sizeof b, "%-18s %6d %10.1f%% %10.1f%% %11s %14s  %s\n", e.strategy.c_str(),
                  e.points, 100 * e.mean_abs_error, 100 * e.max_abs_error,
                  pct(e.mean_error).c_str(), st.c_str(), e.cpu_bound ? "yes" : "no");
    s += b;
    if (e.cpu_bound) {
      goal_names.push_back(e.strategy);
      goal_max = std::max(goal_max, e.max_abs_error);
    }
  }
  std::string names;
  for (const auto& n : goal_names) names += (names.empty() ? "" : ", ") + n;
  if (goal_names.empty()) {
    std::snprintf(
        b, sizeof b,
        "\nGoal (|error| <= %.0f%% on CPU-bound strategies): no CPU-bound strategy in this sweep\n",
        100 * goal);
  } else {
    std::snprintf(
        b, sizeof b,
        "\nGoal: |error| <= %.0f%% on the CPU-bound strategies (%s): %s (largest %.1f%%)\n",
        100 * goal, names.c_str(), goal_max <= goal ? "met" : "NOT met", 100 * goal_max);
  }
  s += b;
  return s;
}

std::string validation_json(const Validation& v, double goal) {
  using Json = nlohmann::ordered_json;
  Json j;
  j["schema"] = "hybridbench.model-validation/1";
  j["platform"] = Json::parse(model_section_json(v.platform));
  j["platform_source"] = to_string(v.platform.source);
  j["goal_abs_error"] = goal;
  j["live_ceilings"] = v.live;
  j["points"] = Json::array();
  for (const auto& p : v.points) {
    Json x;
    x["strategy"] = p.axes.strategy;
    x["model"] = p.axes.model;
    x["seq_len"] = p.axes.seq_len;
    x["batch"] = p.axes.batch;
    x["status"] = to_string(p.status);
    if (p.status != reports::PointStatus::ok) {
      x["reason"] = p.reason;
    } else {
      x["measured_ns"] = p.measured_ns;
      x["measured_p10_ns"] = p.measured_p10_ns;
      x["modeled_static_ns"] = p.modeled_static_ns;
      x["error_static"] = p.error_static;
      x["error_p10"] = p.error_p10;
      x["measured_noise"] = p.measured_noise;
      x["modeled_ns"] = p.modeled_ns;
      x["error"] = p.error;
      x["overlap"] = p.overlap;
      x["measured_phases_ns"] = p.measured_phases;
      x["modeled_phases_ns"] = p.modeled_phases;
    }
    j["points"].push_back(x);
  }
  j["strategies"] = Json::array();
  for (const auto& e : v.strategies)
    j["strategies"].push_back({{"strategy", e.strategy},
                               {"points", e.points},
                               {"mean_abs_error", e.mean_abs_error},
                               {"max_abs_error", e.max_abs_error},
                               {"mean_error", e.mean_error},
                               {"mean_abs_error_p10", e.mean_abs_error_p10},
                               {"max_abs_error_p10", e.max_abs_error_p10},
                               {"cpu_bound", e.cpu_bound},
                               {"within_goal", e.max_abs_error <= goal},
                               {"within_goal_p10", e.max_abs_error_p10 <= goal}});
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace hb::model
