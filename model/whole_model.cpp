#include "model/whole_model.h"

#include <cstdio>
#include <set>

#include "core/error.h"
#include "core/layer_work.h"
#include "model/roofline.h"

namespace hb::model {

const ModelPreset* whole_model_preset(const reports::Point& p,
                                      std::span<const ModelPreset> own_models) {
  if (!p.timed() || p.step.summary.median <= 0) return nullptr;
  const auto scope = p.axes.extra.find("scope");
  if (scope == p.axes.extra.end() || scope->second != to_string(Scope::layer)) return nullptr;
  for (std::span<const ModelPreset> models : {own_models, model_presets()})
    for (const auto& m : models)
      if (m.name == p.axes.model) return m.layers > 0 && m.vocab > 0 ? &m : nullptr;
  return nullptr;
}

Traffic outside_layers_traffic(const ModelPreset& p, int batch) {
  const auto acc = Processor::accelerator;
  const auto hbm = MemoryKind::accelerator;
  const int64_t e = static_cast<int64_t>(dtype_size(p.shape.kv_dtype));
  const int64_t rows = int64_t{batch} * p.hidden * e;
  const int64_t logits = int64_t{batch} * p.vocab * static_cast<int64_t>(sizeof(float));
  Traffic t;
  t.read(acc, hbm, rows);  // embedding: one row per sequence
  t.write(acc, hbm, rows);
  t.read(acc, hbm, rows + int64_t{p.hidden} * e);  // final norm: rows and its weight
  t.write(acc, hbm, rows);
  t.weight_bytes = lm_head_weight_bytes(p);  // LM head
  t.read(acc, hbm, t.weight_bytes + rows);
  t.write(acc, hbm, logits);
  t.accelerator_flops = 2.0 * batch * static_cast<double>(p.hidden) * p.vocab;
  t.read(acc, hbm, logits);  // sampling: the logits once, a token id per sequence out
  t.write(acc, hbm, int64_t{batch} * 4);
  t.d2h_bytes = int64_t{batch} * 4;
  t.kernel_launches = 4;
  t.syncs = 1;
  return t;
}

double modeled_outside_layers_ns(const PlatformModel& m, const ModelPreset& p, int batch,
                                 const Deployment& d) {
  // The LM head is vocab-parallel: each rank streams 1/tp of it (its logits' gather is not
  // priced: batch x vocab / tp floats, small beside the head).
  Deployment lm = d;
  lm.weight_share = 1.0 / d.tp;
  const ResourceTimes r = price_resources(rank_traffic(outside_layers_traffic(p, batch), lm), m);
  return r.accelerator_ns + r.transfer_ns + r.sync_ns;
}

namespace {

std::string gigabytes(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GB", bytes / 1e9);
  return buf;
}

}  // namespace

std::string weights_caveat(const PlatformModel& m, const ModelPreset& model, const Deployment& d) {
  // The layers, the LM head and the embedding table (counted apart, as untied models have them),
  // one rank's.
  const double weights = rank_weight_bytes(model, d.tp, d.weights);
  const double usable =
      static_cast<double>(m.accelerator.memory_bytes) * m.accelerator.memory_usable_share;
  if (weights <= usable) return "";
  return model.name + "'s weights (" + gigabytes(weights) + ", layers, LM head and embedding" +
         (d.tp > 1 ? ", per GPU at tp " + std::to_string(d.tp) : std::string()) + ") exceed " +
         m.name + "'s usable accelerator memory (" + gigabytes(usable) +
         "): this ITL prices them as if they fitted (weight offloading is not modeled), so it "
         "is a lower bound";
}

namespace {

reports::WholeModel block(const reports::Point& p, const ModelPreset& model, double outside_ns,
                          reports::Provenance outside, const PlatformEconomics& e,
                          const std::string& platform, bool has_cxl_tier,
                          const std::string& caveat = "", int gpus = 1, int gpus_per_node = 0) {
  reports::WholeModelInputs in;
  in.layers = model.layers;
  in.layer_step_ns = p.step.summary.median;
  in.batch = p.axes.batch;
  in.outside_layers_ns = outside_ns;
  in.outside_layers_provenance = outside;
  in.usd_per_hour = usd_per_accelerator_hour(e, platform);
  in.watts = watts_per_accelerator(e, platform, has_cxl_tier);
  in.caveat = caveat;
  in.gpus = gpus;
  in.gpus_per_node = gpus_per_node;
  return reports::make_whole_model(in);
}

}  // namespace

void attach_modeled_whole_model(reports::Report& r, const std::vector<PlatformModel>& platforms,
                                std::span<const ModelPreset> own_models) {
  for (auto& p : r.points) {
    const ModelPreset* model = whole_model_preset(p, own_models);
    if (!model) continue;
    const auto name = p.axes.extra.find("platform");
    const PlatformModel* m = nullptr;
    for (const auto& x : platforms)
      if (name != p.axes.extra.end() && x.name == name->second) m = &x;
    if (!m)
      throw Error("modeled point " + p.axes.key() + " names no platform of this run",
                  "a bug: report it");
    const Deployment d = point_deployment(p, *model);
    const int per_node = m->node.gpus > 1 ? m->node.gpus
                         : m->economics.gpus_per_node
                             ? static_cast<int>(m->economics.gpus_per_node->value)
                             : 0;
    p.whole_model =
        block(p, *model, modeled_outside_layers_ns(*m, *model, p.axes.batch, d),
              reports::Provenance::modeled, m->economics, m->name,
              m->tier(MemoryKind::cxl) != nullptr, weights_caveat(*m, *model, d), d.tp, per_node);
  }
}

void attach_measured_whole_model(reports::Report& r, const bench::SweepSpec& spec,
                                 const PlatformEconomics& economics, const std::string& platform,
                                 bool has_cxl_tier) {
  if (r.interruption.interrupted) return;
  std::map<const ModelPreset*, std::set<int>> wanted;
  for (const auto& p : r.points)
    if (const ModelPreset* m = whole_model_preset(p, spec.own_models))
      wanted[m].insert(p.axes.batch);
  std::map<std::pair<const ModelPreset*, int>, bench::OutsideLayersTiming> timed;
  for (const auto& [model, batches] : wanted) {
    const auto t = bench::time_outside_layers(spec.accelerator, *model,
                                              std::vector<int>(batches.begin(), batches.end()));
    for (const auto& [batch, timing] : t) timed[{model, batch}] = timing;
  }
  for (auto& p : r.points)
    if (const ModelPreset* m = whole_model_preset(p, spec.own_models)) {
      const auto& t = timed.at({m, p.axes.batch});
      p.whole_model = block(p, *m, t.ns, t.provenance, economics, platform, has_cxl_tier);
    }
}

}  // namespace hb::model
