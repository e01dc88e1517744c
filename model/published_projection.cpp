#include "model/published_projection.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/error.h"
#include "core/model_presets.h"
#include "model/model_run.h"
#include "model/platform_model.h"
#include "model/whole_model.h"
#include "model/profile_reader.h"

namespace hb::model {

double prefill_ns(const PlatformModel& m, const ModelPreset& model, int batch, int64_t prompt) {
  if (m.accelerator.prefill_tflops <= 0)
    throw Error("platform " + m.name +
                    " has no accelerator.prefill_tflops, which a row that "
                    "counts its prompt's prefill needs",
                "give the preset the dense fp16 GEMM rate its GPU sustains, with its source");
  const double tokens = static_cast<double>(batch) * static_cast<double>(prompt);
  const double params = static_cast<double>(model_weight_bytes(model)) /
                        static_cast<double>(dtype_size(model.shape.kv_dtype));
  // Causal attention: QK^T and PV over half the s x s scores, per layer and sequence.
  const double attention =
      2.0 * batch * static_cast<double>(prompt) * prompt * model.hidden * model.layers;
  const double flops = 2.0 * params * tokens + attention;
  const double bytes = static_cast<double>(model_weight_bytes(model));
  return std::max(flops / (m.accelerator.prefill_tflops * 1e3),
                  bytes / (m.accelerator.memory_gbps * m.accelerator.attention_efficiency));
}

namespace {

const char* metric_name(PublishedMetric m) {
  switch (m) {
    case PublishedMetric::ms_per_token:
      return "ms_per_token";
    case PublishedMetric::tokens_per_s:
      return "tokens_per_s";
    case PublishedMetric::transfer_share:
      return "transfer_share";
  }
  return "?";
}

// The modeled layer step's transfer phase over the step (one layer: the breakdowns papers draw
// are of a block).
double transfer_share(const reports::Point& p) {
  const auto t = p.phases.find("transfer");
  if (t == p.phases.end() || p.step.summary.median <= 0) return 0;
  return t->second.summary.median / p.step.summary.median;
}

std::string label(const PublishedRow& r) {
  return r.platform + " " + r.model + " " + r.strategy + " " + std::to_string(r.seq_len) +
         " tokens, batch " + std::to_string(r.batch);
}

// The row's figure from the projected point's whole-model ITL; with gen_len, the batch's
// generated tokens over the prefill and gen_len decode steps (each priced at the prompt's
// length: the 32 tokens FlexGen adds to a 512-token prompt move its step by a few percent).
double in_metric(const PublishedRow& r, const PlatformModel& m, double itl_ns) {
  if (r.metric == PublishedMetric::ms_per_token) return itl_ns / 1e6;
  if (r.gen_len == 0) return r.batch * 1e9 / itl_ns;
  const double total_ns =
      prefill_ns(m, find_model_preset(r.model), r.batch, r.seq_len) + r.gen_len * itl_ns;
  return static_cast<double>(r.batch) * r.gen_len * 1e9 / total_ns;
}

PublishedProjection project_row(const PublishedRow& row, const bench::RunEnvironment& env) {
  PublishedProjection p;
  p.row = row;
  const std::vector<PlatformModel> platform = {load_platform_model(row.platform)};
  reports::Report r = run_model_sweep(published_row_sweep(row), platform, env, {},
                                      {DeploymentRequest{row.tp, row.weights, row.kv}});
  attach_modeled_whole_model(r, platform);
  if (r.points.size() != 1)
    throw Error("projecting " + label(row) + " gave " + std::to_string(r.points.size()) +
                    " points, not one",
                "a bug: report it");
  const reports::Point& pt = r.points[0];
  p.status = reports::to_string(pt.status);
  p.reason = pt.reason;
  if (pt.status == reports::PointStatus::ok && row.metric == PublishedMetric::transfer_share) {
    p.projected = transfer_share(pt);
    p.error = (p.projected - row.value) / row.value;
  } else if (pt.status == reports::PointStatus::ok && pt.whole_model) {
    p.projected = in_metric(row, platform[0], pt.whole_model->itl_ns);
    p.error = (p.projected - row.value) / row.value;
  } else {
    if (p.reason.empty()) p.reason = "no whole-model figure";
    p.error = 1;  // a row that does not project misses any goal
  }
  return p;
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string fmt(const char* f, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, x);
  return buf;
}

}  // namespace

bench::SweepSpec published_row_sweep(const PublishedRow& row) {
  bench::SweepSpec s;
  s.models = {row.model};
  s.kv_dtypes = {row.dtype};
  s.seq_lens = {row.seq_len};
  s.batches = {row.batch};
  s.strategies = {row.strategy};
  s.strategy_options = row.options;
  s.accelerator.kind = AcceleratorKind::cpu;  // model mode's: counts the GEMMs, prices the rest
  // Step times are the model's, identical step to step at one length: a few steps settle them.
  s.decode_steps = 3;
  s.stop.warmup_steps = 1;
  s.stop.min_samples = 2;
  s.accuracy_steps = 1;
  s.repetitions = 1;
  return s;
}

PublishedValidation project_published(const std::vector<PublishedRow>& rows,
                                      const bench::RunEnvironment& env,
                                      const std::function<void(const std::string&)>& progress) {
  PublishedValidation v;
  std::vector<double> abs_errors;
  for (const PublishedRow& row : rows) {
    if (progress) progress(label(row));
    v.rows.push_back(project_row(row, env));
    if (row.excluded.empty()) abs_errors.push_back(std::fabs(v.rows.back().error));
  }
  v.median_abs_error = median_of(abs_errors);
  v.max_abs_error =
      abs_errors.empty() ? 0 : *std::max_element(abs_errors.begin(), abs_errors.end());
  return v;
}

bool published_goal_met(const PublishedValidation& v) {
  return !v.rows.empty() && v.median_abs_error <= kPublishedMedianGoal &&
         v.max_abs_error <= kPublishedMaxGoal;
}

std::string published_text(const PublishedValidation& v) {
  char line[512];
  std::string out = "Model mode against published GPU measurements (model/published/)\n";
  std::snprintf(line, sizeof line, "%-20s %-13s %-9s %8s %5s %-14s %10s %10s %8s\n", "platform",
                "model", "strategy", "seq_len", "batch", "metric", "projected", "published",
                "error");
  out += line;
  for (const auto& p : v.rows) {
    const auto& r = p.row;
    const std::string projected = p.status == "ok" ? fmt("%.2f", p.projected) : p.status;
    std::snprintf(line, sizeof line, "%-20s %-13s %-9s %8lld %5d %-14s %10s %10.2f %8s\n",
                  r.platform.c_str(), r.model.c_str(), r.strategy.c_str(),
                  static_cast<long long>(r.seq_len), r.batch, metric_name(r.metric),
                  projected.c_str(), r.value,
                  p.status == "ok" ? fmt("%+.1f%%", 100 * p.error).c_str() : "-");
    out += line;
    if (p.status != "ok") out += "  " + p.status + ": " + p.reason + "\n";
    if (!r.excluded.empty()) out += "  not held to the goal: " + r.excluded + "\n";
  }
  out += "median |error| " + fmt("%.1f%%", 100 * v.median_abs_error) +
         " (goal <= " + fmt("%.0f%%", 100 * kPublishedMedianGoal) + "), largest " +
         fmt("%.1f%%", 100 * v.max_abs_error) +
         " (goal <= " + fmt("%.0f%%", 100 * kPublishedMaxGoal) +
         "): " + (published_goal_met(v) ? "met" : "missed") + "\n";
  return out;
}

std::string published_json(const PublishedValidation& v) {
  Json rows = Json::array();
  for (const auto& p : v.rows) {
    const auto& r = p.row;
    Json j = {{"publication", r.publication},
              {"where", r.where},
              {"platform", r.platform},
              {"model", r.model},
              {"system", r.system},
              {"strategy", r.strategy},
              {"seq_len", r.seq_len},
              {"batch", r.batch},
              {"metric", metric_name(r.metric)},
              {"published", r.value},
              {"status", p.status}};
    if (!r.options.empty()) j["options"] = r.options;
    if (r.gen_len > 0) j["gen_len"] = r.gen_len;
    if (!r.excluded.empty()) j["excluded"] = r.excluded;
    if (p.status == "ok") {
      j["projected"] = p.projected;
      j["error"] = p.error;
    } else {
      j["reason"] = p.reason;
    }
    rows.push_back(std::move(j));
  }
  const Json doc = {
      {"schema", "hybridbench.published-validation/1"},
      {"rows", rows},
      {"median_abs_error", v.median_abs_error},
      {"max_abs_error", v.max_abs_error},
      {"goal", {{"median_abs_error", kPublishedMedianGoal}, {"max_abs_error", kPublishedMaxGoal}}},
      {"goal_met", published_goal_met(v)}};
  return doc.dump(2) + "\n";
}

}  // namespace hb::model
