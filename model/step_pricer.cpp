#include "model/step_pricer.h"

#include <cmath>
#include <stdexcept>
#include <utility>
#include <vector>

#include "core/layer_work.h"
#include "core/stats.h"
#include "model/roofline.h"
#include "model/sampled_batch.h"
#include "bench/contender.h"

namespace hb::model {

namespace {

// One point's prices: in place of its timing (replace), or kept beside it (observe).
class PricedPoint final : public bench::StepObserver::PointRecord {
 public:
  PricedPoint(reports::PointAxes axes, const PricerOptions& o, int stands_for, std::string platform)
      : axes_(std::move(axes)), o_(o), stands_for_(stands_for), platform_(std::move(platform)) {}

  void on_step(const Strategy& executed, int s, bool timed, bench::RecordedStep& t) override {
    if (stands_for_ > 1)
      t.traffic = batch_traffic(*o_.sweep, stands_for_, t.traffic, executed.overlap());
    const StepPrice m = o_.price(axes_, executed, s, t.traffic);
    if (o_.replace) {
      t.total_ns = std::llround(m.total_ns);
      t.phase_ns.clear();
      for (const auto& [ph, ns] : m.phase_ns) t.phase_ns[ph] = std::llround(ns);
    } else if (timed && m.total_ns > 0) {
      modeled_.push_back(m.total_ns);
      for (const auto& [ph, ns] : m.phase_ns) phases_[ph].push_back(ns);
      overlap_ = m.overlap;
    }
  }

  // Side by side only when every timed step was priced: a partial set would compare different
  // steps.
  void finish(reports::Point& p) override {
    if (o_.replace || modeled_.empty() || modeled_.size() != p.step.samples_ns.size()) return;
    p.modeled.platform = platform_;
    p.modeled.overlap = overlap_;
    p.modeled.step = reports::Timing::from_samples(modeled_);
    for (const auto& [name, v] : phases_) p.modeled.phase_median_ns[name] = summarize(v).median;
    bench::update_model_error(p);
  }

 private:
  reports::PointAxes axes_;
  const PricerOptions& o_;  // the pricer's, which outlives its records
  int stands_for_;
  std::string platform_;
  std::vector<double> modeled_;
  std::map<std::string, std::vector<double>> phases_;
  std::string overlap_;
};

// A platform's resource times for a step of the executed sequence, as the batch's.
class ModeledStepTimes final : public StepTimeSource {
 public:
  ModeledStepTimes(const PlatformModel& m, const PricerOptions& o, int stands_for)
      : m_(m), o_(o), stands_for_(stands_for) {}
  ResourceTimesNs price(const Traffic& step, const OverlapStructure& o) const override {
    const Traffic batch = stands_for_ > 1 ? batch_traffic(*o_.sweep, stands_for_, step, o) : step;
    const ResourceTimes r = price_resources(rank_traffic(batch, o_.deployment), m_);
    return {r.cpu_ns, r.accelerator_ns, r.transfer_ns};
  }
  std::string describe() const override { return "modeled on " + m_.name; }

 private:
  const PlatformModel& m_;  // the pricer's, which outlive the unit's strategies
  const PricerOptions& o_;
  int stands_for_;
};

}  // namespace

std::unique_ptr<StepTimeSource> StepPricer::step_times(int stands_for) const {
  if (!o_.replace) return nullptr;
  if (stands_for > 1 && !o_.sweep)  // a caller's bug (model_sweep sets it), not the user's
    throw std::logic_error("step times for a batch without PricerOptions::sweep");
  return std::make_unique<ModeledStepTimes>(m_, o_, stands_for);
}

StepPricer::StepPricer(const PlatformModel& m, PricerOptions o) : m_(m), o_(std::move(o)) {
  if (!o_.price)
    o_.price = [m, d = o_.deployment, hidden = o_.hidden](
                   const reports::PointAxes& axes, const Strategy& s, int, const Traffic& traffic) {
      ModeledStep ms = model_step(rank_traffic(traffic, d), overlap_for(s.overlap()), m);
      const auto scope = axes.extra.find("scope");
      if (d.tp > 1 && scope != axes.extra.end() && scope->second == to_string(Scope::layer)) {
        const double ar = layer_allreduce_ns(m.node, d.tp, axes.batch, hidden);
        ms.total_ns += ar;
        ms.phase_ns["sync"] += ar;
      }
      return StepPrice{ms.total_ns, ms.phase_ns, ms.overlap};
    };
}

std::map<std::string, std::string> StepPricer::lane_axes() const {
  if (!o_.replace) return {};
  return {{"platform", m_.name}};
}

void StepPricer::label(reports::Point& p) const {
  if (!o_.replace) return;
  p.provenance = reports::Provenance::modeled;
  if (!m_.accelerator.kind.empty()) p.axes.accelerator = m_.accelerator.kind;
  for (const auto& [k, v] : lane_axes()) p.axes.extra[k] = v;
  const Deployment& d = o_.deployment;
  if (d.weights != PricedDtype::fp16 || d.kv != PricedDtype::fp16)
    p.axes.extra["dtypes"] =
        std::string("weights=") + kPricedDtypes.name(d.weights) + ",kv=" + kPricedDtypes.name(d.kv);
}

std::unique_ptr<bench::StepObserver::PointRecord> StepPricer::observe(reports::Point& p,
                                                                      const Strategy& s,
                                                                      int stands_for) const {
  if (stands_for > 1 && !o_.sweep)  // a caller's bug (model_sweep sets it), not the user's
    throw std::logic_error(
        "a point standing for a batch reached a step pricer without "
        "PricerOptions::sweep");
  if (o_.annotate) {
    std::string from;
    const OverlapStructure o = overlap_for(s.overlap(), &from);
    p.strategy_params["model.platform"] = m_.name;
    p.strategy_params["model.overlap"] = o.to_string() + " (" + from + ")";
    if (m_.node.gpus > 1 || !o_.deployment.trivial())
      p.strategy_params["model.deployment"] =
          o_.deployment.text() + " (" + o_.deployment.choice + ")";
  }
  return std::make_unique<PricedPoint>(p.axes, o_, stands_for, m_.name);
}

std::shared_ptr<const StepPricer> make_step_pricer(const PlatformModel& m, PricerOptions options) {
  return std::make_shared<StepPricer>(m, std::move(options));
}

}  // namespace hb::model
