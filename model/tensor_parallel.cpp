#include "model/tensor_parallel.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <vector>

#include "core/error.h"

namespace hb::model {

namespace {

constexpr double kFp16Bytes = 2.0;
// The whole KV must fit with this much to spare: the strategies' plans round it up to pages and
// add the decode steps' tokens.
constexpr double kKvFitMargin = 1.02;

int kv_split_of(const ModelPreset& model, int tp) { return std::min(tp, model.shape.kv_heads); }

double usable_bytes(const PlatformModel& m) {
  return static_cast<double>(m.accelerator.memory_bytes) * m.accelerator.memory_usable_share;
}

// One layer's K and V projection weights at fp16 (replicated with the KV heads they serve).
double kv_projection_bytes(const ModelPreset& model) {
  return 2.0 * model.hidden * model.shape.kv_heads * model.shape.head_dim * kFp16Bytes;
}

// One rank's weights of one layer at fp16.
double rank_layer_bytes(const ModelPreset& model, int tp) {
  const double all = static_cast<double>(layer_weight_bytes(model)) *
                     (kFp16Bytes / static_cast<double>(dtype_size(model.shape.kv_dtype)));
  const double kv = kv_projection_bytes(model);
  return (all - kv) / tp + kv / kv_split_of(model, tp);
}

std::string gigabytes(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GB", bytes / 1e9);
  return buf;
}

}  // namespace

std::vector<DeploymentRequest> parse_deployments(const std::string& tp,
                                                 const std::string& precisions) {
  DeploymentRequest base;
  if (tp != "auto") {
    char* end = nullptr;
    const long n = std::strtol(tp.c_str(), &end, 10);
    if (tp.empty() || *end != '\0' || n < 1 || n > 1024)
      throw Error("--tp '" + tp + "' is neither auto nor a GPU count 1-1024",
                  "give --tp auto (the smallest that fits) or --tp N");
    base.tp = static_cast<int>(n);
  }
  std::vector<DeploymentRequest> out;
  size_t at = 0;
  while (at <= precisions.size()) {
    const size_t comma = std::min(precisions.find(',', at), precisions.size());
    const std::string p = precisions.substr(at, comma - at);
    DeploymentRequest r = base;
    if (p == "fp8") {
      r.weights = r.kv = PricedDtype::fp8;
    } else if (p == "fp8-weights") {
      r.weights = PricedDtype::fp8;
    } else if (p != "fp16") {
      throw Error("--precision '" + p + "' is not fp16, fp8 or fp8-weights",
                  "give a comma-separated list of fp16, fp8 (weights and KV) and fp8-weights");
    }
    out.push_back(r);
    at = comma + 1;
  }
  return out;
}

std::string Deployment::text() const {
  return "tp=" + std::to_string(tp) + " weights=" + kPricedDtypes.name(weights) +
         " kv=" + kPricedDtypes.name(kv);
}

std::string tp_problem(const PlatformModel& m, const ModelPreset& model, int tp) {
  const int gpus = m.node.gpus;
  const std::string t = "--tp " + std::to_string(tp);
  if (tp < 1) return t + " is below 1";
  if (tp > gpus)
    return t + " exceeds " + m.name + "'s " + std::to_string(gpus) + " GPU" +
           (gpus == 1 ? "" : "s") + " per node (its profile's node.gpus)";
  if (gpus % tp != 0)
    return t + " does not divide " + m.name + "'s " + std::to_string(gpus) + " GPUs per node";
  const int q = model.shape.q_heads, kv = model.shape.kv_heads;
  if (q % tp != 0)
    return t + " does not divide " + model.name + "'s " + std::to_string(q) + " query heads";
  if (kv % tp != 0 && tp % kv != 0)
    return t + " neither divides " + model.name + "'s " + std::to_string(kv) +
           " KV heads nor is a multiple of them (replicated KV heads need tp = k x kv_heads)";
  return "";
}

double rank_weight_bytes(const ModelPreset& model, int tp, PricedDtype weights) {
  const double lm_and_embedding = 2.0 * static_cast<double>(lm_head_weight_bytes(model)) *
                                  (kFp16Bytes / dtype_size(model.shape.kv_dtype)) / tp;
  return (model.layers * rank_layer_bytes(model, tp) + lm_and_embedding) * dtype_bytes(weights) /
         kFp16Bytes;
}

double rank_kv_room(const PlatformModel& m, const ModelPreset& model, int tp, PricedDtype weights) {
  return usable_bytes(m) - rank_weight_bytes(model, tp, weights);
}

namespace {

Deployment make_deployment(const PlatformModel& m, const ModelPreset& model, int tp,
                           const DeploymentRequest& r) {
  Deployment d;
  d.tp = tp;
  d.kv_split = kv_split_of(model, tp);
  d.weights = r.weights;
  d.kv = r.kv;
  const double layer = static_cast<double>(layer_weight_bytes(model)) *
                       (kFp16Bytes / static_cast<double>(dtype_size(model.shape.kv_dtype)));
  d.weight_share = layer > 0 ? rank_layer_bytes(model, tp) / layer : 1.0 / tp;
  const double w = rank_weight_bytes(model, tp, r.weights);
  if (w >= usable_bytes(m))
    d.refused = model.name + "'s weights (" + gigabytes(w) + " per GPU at tp " +
                std::to_string(tp) + ", " + kPricedDtypes.name(r.weights) +
                ", layers, LM head and embedding) exceed " + m.name +
                "'s usable accelerator memory (" + gigabytes(usable_bytes(m)) + ")";
  return d;
}

}  // namespace

Deployment choose_deployment(const PlatformModel& m, const ModelPreset& model, int64_t context,
                             int batch, const DeploymentRequest& request) {
  if (request.tp > 0) {
    if (std::string why = tp_problem(m, model, request.tp); !why.empty())
      throw Error(why,
                  "pick a --tp that divides the node's GPUs and the model's heads, or --tp auto");
    Deployment d = make_deployment(m, model, request.tp, request);
    d.choice = "--tp " + std::to_string(request.tp);
    return d;
  }
  std::vector<int> valid;
  for (int t = 1; t <= std::max(1, m.node.gpus); ++t)
    if (tp_problem(m, model, t).empty()) valid.push_back(t);
  const double kv_per_rank = static_cast<double>(batch) * static_cast<double>(context) *
                             static_cast<double>(model.shape.kv_bytes_per_token()) * model.layers *
                             dtype_bytes(request.kv) /
                             static_cast<double>(dtype_size(model.shape.kv_dtype));
  for (int t : valid)
    if (kv_per_rank / kv_split_of(model, t) * kKvFitMargin <=
        rank_kv_room(m, model, t, request.weights)) {
      Deployment d = make_deployment(m, model, t, request);
      d.choice = "auto: the smallest tp whose GPUs hold the weights and the batch's KV";
      return d;
    }
  for (auto t = valid.rbegin(); t != valid.rend(); ++t)
    if (rank_kv_room(m, model, *t, request.weights) > 0) {
      Deployment d = make_deployment(m, model, *t, request);
      d.choice = "auto: no tp holds the batch's KV; the largest whose GPUs hold the weights";
      return d;
    }
  Deployment d = make_deployment(m, model, valid.empty() ? 1 : valid.back(), request);
  d.choice = "auto: the weights fit no tp of the node";
  return d;
}

int64_t executed_kv_budget_per_layer(const PlatformModel& m, const ModelPreset& model,
                                     const Deployment& d) {
  // kv_budget_per_layer's rule (the layers' weights only, 1 MiB floor), for one rank.
  const double weights =
      model.layers * rank_layer_bytes(model, d.tp) * dtype_bytes(d.weights) / kFp16Bytes;
  const double per_layer = (usable_bytes(m) - weights) / std::max(1, model.layers);
  const double rank = std::max(static_cast<double>(int64_t{1} << 20), per_layer);
  return static_cast<int64_t>(rank / d.kv_scale());
}

Traffic rank_traffic(const Traffic& executed, const Deployment& d) {
  if (d.trivial()) return executed;
  const int acc = static_cast<int>(Processor::accelerator);
  const int hbm = static_cast<int>(MemoryKind::accelerator);
  const double host = dtype_bytes(d.kv) / kFp16Bytes;
  auto r = [](int64_t x, double f) {
    return static_cast<int64_t>(std::llround(static_cast<double>(x) * f));
  };
  Traffic t = executed;
  for (int p = 0; p < 2; ++p)
    for (int k = 0; k < kMemoryKinds; ++k) {
      const double f = k == hbm ? d.kv_scale() : (p == acc ? d.kv_scale() : host);
      const int64_t w = p == acc && k == hbm ? executed.weight_bytes : 0;
      t.bytes_read[p][k] = r(executed.bytes_read[p][k] - w, f);
      t.bytes_written[p][k] = r(executed.bytes_written[p][k], f);
    }
  t.weight_bytes = r(executed.weight_bytes, d.weight_share * dtype_bytes(d.weights) / kFp16Bytes);
  t.bytes_read[acc][hbm] += t.weight_bytes;
  t.h2d_bytes = r(executed.h2d_bytes, d.kv_scale());
  t.d2h_bytes = r(executed.d2h_bytes, d.kv_scale());
  t.accelerator_flops = executed.accelerator_flops / d.tp;
  t.select_elements[acc] = executed.select_elements[acc] / d.kv_split;
  return t;
}

Deployment point_deployment(const reports::Point& p, const ModelPreset& model) {
  DeploymentRequest r;
  if (const auto d = p.axes.extra.find("dtypes"); d != p.axes.extra.end()) {
    r.weights =
        d->second.find("weights=fp8") != std::string::npos ? PricedDtype::fp8 : PricedDtype::fp16;
    r.kv = d->second.find("kv=fp8") != std::string::npos ? PricedDtype::fp8 : PricedDtype::fp16;
  }
  int t = 1;
  if (const auto d = p.strategy_params.find("model.deployment");
      d != p.strategy_params.end() && d->second.rfind("tp=", 0) == 0)
    t = std::max(1, std::atoi(d->second.c_str() + 3));
  Deployment d;
  d.tp = t;
  d.kv_split = kv_split_of(model, t);
  d.weights = r.weights;
  d.kv = r.kv;
  d.weight_share = 1.0 / t;
  return d;
}

double allreduce_ns(const NodeModel& node, int tp, double bytes) {
  if (tp <= 1) return 0;
  const double steps = 2.0 * (tp - 1);
  const double wire = node.interconnect_gbps > 0
                          ? steps / tp * bytes / node.interconnect_gbps  // 1 GB/s = 1 B/ns
                          : 0.0;
  return wire + steps * node.interconnect_latency_us * 1e3;
}

double layer_allreduce_ns(const NodeModel& node, int tp, int batch, int hidden) {
  return 2.0 * allreduce_ns(node, tp, static_cast<double>(batch) * hidden * kFp16Bytes);
}

}  // namespace hb::model
