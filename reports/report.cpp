// The report data model's behaviour: vocabularies, point keys, the host part of the context and
// the speedups section. Serialisation is elsewhere (json_io.cpp, schema.cpp).
#include "reports/report.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <span>
#include <tuple>

#include "core/paired_ratio.h"
#include "core/build_info.h"
#include "core/cpu_features.h"

namespace hb::reports {

std::string schema_string() {
  return std::string(kSchemaId) + "/" + std::to_string(kSchemaVersion);
}

std::string PointAxes::group_key() const {
  // Fixed order and explicit names, so keys are stable across versions of this code and
  // readable in compare's output.
  std::string k = "model=" + model + ";family=" + family + ";seq_len=" + std::to_string(seq_len) +
                  ";batch=" + std::to_string(batch) + ";kv_dtype=" + kv_dtype +
                  ";workload=" + workload + ";accelerator=" + accelerator +
                  ";decode_steps=" + std::to_string(decode_steps) +
                  ";page_tokens=" + std::to_string(page_tokens);
  for (const auto& [name, value] : extra) k += ";" + name + "=" + value;
  return k;
}

std::string PointAxes::key() const { return group_key() + ";strategy=" + strategy; }

bool axes_less(const PointAxes& a, const PointAxes& b) {
  auto tie = [](const PointAxes& x) {
    return std::tie(x.model, x.family, x.workload, x.kv_dtype, x.accelerator, x.batch, x.seq_len,
                    x.strategy, x.decode_steps, x.page_tokens, x.extra);
  };
  return tie(a) < tie(b);
}

Timing Timing::from_samples(std::vector<double> samples_ns) {
  Timing t;
  t.summary = summarize(std::span<const double>(samples_ns));
  t.samples_ns = std::move(samples_ns);
  return t;
}

static std::string read_cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon == std::string::npos) break;
      auto v = line.substr(colon + 1);
      v.erase(0, v.find_first_not_of(" \t"));
      return v;
    }
  return "unknown";
}

void fill_host_context(ReportContext& ctx) {
  const auto& b = build_info();
  ctx.tool_version = b.version;
  ctx.git_commit = b.git_commit;
  ctx.build_type = b.build_type;
  ctx.compiler = b.compiler;
  ctx.cuda = b.cuda;
  ctx.cuda_version = b.cuda_version;

  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &utc);
  ctx.date_utc = date;

  char host[256] = {};
  ctx.host = gethostname(host, sizeof host - 1) == 0 ? host : "unknown";
  utsname u{};
  ctx.os = uname(&u) == 0 ? std::string(u.sysname) + " " + u.release + " " + u.machine : "unknown";
  ctx.cpu_model = read_cpu_model();
  ctx.simd_level = simd_level_name(best_simd_level());
}

PointStatus point_status(PlanStatus s) {
  switch (s) {
    case PlanStatus::ok:
      return PointStatus::ok;
    case PlanStatus::oom:
      return PointStatus::oom;
    case PlanStatus::unsupported:
      return PointStatus::unsupported;
  }
  return PointStatus::error;  // unreachable: every PlanStatus is handled above
}

// A ratio involving an emulated figure is emulated (the enum lists the strongest first).
Provenance weaker(Provenance a, Provenance b) { return a >= b ? a : b; }

StrategyRole role_from_name(const std::string& strategy) {
  if (strategy == "hybridgen") return StrategyRole::system;
  if (strategy.rfind("hybridgen-", 0) == 0) return StrategyRole::ablation;
  if (strategy == "full-gpu") return StrategyRole::reference;
  return StrategyRole::baseline;
}

bool Speedup::decided(double margin) const {
  if (!(ratio > 0) || std::fabs(std::log(ratio)) <= std::log1p(margin)) return false;
  if (paired()) return ci_low > 1 || ci_high < 1;
  if (!noise_known()) return false;
  return std::fabs(std::log(ratio)) > 2 * rel_noise;
}

const ModelUncertainty* ReportContext::uncertainty(const std::string& figure) const {
  for (const auto& u : model_uncertainty)
    if (u.figure == figure) return &u;
  return nullptr;
}

std::optional<double> sweep_number(const ReportContext& c, const std::string& key) {
  const auto it = c.sweep.find(key);
  if (it == c.sweep.end()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(it->second.c_str(), &end);
  if (end == it->second.c_str()) return std::nullopt;
  return v;
}

double tie_margin(const ReportContext& c) {
  const auto v = sweep_number(c, "tie_margin_fraction");
  return v && *v > 0 && *v <= 1 ? *v : 0;
}

namespace {

// The pass-to-pass spread of a group's points that ran the same --repetitions passes (the
// most common set of passes among them; pass_spread), or none.
std::optional<PassSpread> group_pass_spread(const std::vector<const Point*>& members) {
  std::map<std::vector<int64_t>, int> seen;
  for (const Point* p : members)
    if (p->step.repetition_rounds.size() >= 2) ++seen[p->step.repetition_rounds];
  if (seen.empty()) return std::nullopt;
  const auto& passes = std::max_element(seen.begin(), seen.end(), [](const auto& x, const auto& y) {
                         return x.second < y.second;
                       })->first;
  std::vector<std::vector<double>> rounds;
  for (const Point* p : members)
    if (p->step.repetition_rounds == passes) rounds.push_back(p->step.pass_medians());
  const PassSpread s = pass_spread(rounds, passes);
  return s.df > 0 ? std::optional<PassSpread>(s) : std::nullopt;
}

// B over A: paired per round when both ran the same rounds, else the medians' ratio; over
// --repetitions passes, widened by the group's pass-to-pass spread.
void fill_ratio(Speedup& s, const Point& a, const Point& b,
                const std::optional<PassSpread>& spread) {
  const std::vector<double> ra = a.step.pass_medians(), rb = b.step.pass_medians();
  if (ra.size() >= 2 && ra.size() == rb.size()) {
    const std::vector<int64_t>& passes = a.step.repetition_rounds;
    const PassSpread* group =
        spread && spread->passes == static_cast<int>(passes.size()) ? &*spread : nullptr;
    const RatioInterval r = passes == b.step.repetition_rounds
                                ? repeated_ratio(ra, rb, passes, 0.95, group)
                                : paired_ratio(ra, rb);
    if (r.pairs >= 2) {
      s.ratio = r.ratio;
      s.rel_noise = r.rel_half_width();
      s.ci_low = r.low;
      s.ci_high = r.high;
      s.ci_coverage = r.coverage;
      s.rounds = r.pairs;
      s.passes = r.passes;
      return;
    }
  }
  s.ratio = b.step.summary.median / a.step.summary.median;
  s.fewest_samples =
      static_cast<int64_t>(std::min(a.step.samples_ns.size(), b.step.samples_ns.size()));
  s.rel_noise = std::hypot(robust_rel_noise(a.step.summary), robust_rel_noise(b.step.summary));
}

}  // namespace

std::vector<Speedup> compute_speedups(const std::vector<Point>& points) {
  std::map<std::string, std::vector<const Point*>> groups;
  for (const auto& p : points)
    if (p.timed() && p.step.summary.median > 0) groups[p.axes.group_key()].push_back(&p);

  std::vector<Speedup> out;
  for (auto& [key, members] : groups) {
    std::sort(members.begin(), members.end(),
              [](const Point* x, const Point* y) { return x->axes.strategy < y->axes.strategy; });
    const std::optional<PassSpread> spread = group_pass_spread(members);
    for (const Point* a : members)
      for (const Point* b : members) {
        if (a->axes.strategy == b->axes.strategy) continue;
        Speedup s;
        s.group_key = key;
        s.strategy_a = a->axes.strategy;
        s.strategy_b = b->axes.strategy;
        fill_ratio(s, *a, *b, spread);
        s.provenance = weaker(a->provenance, b->provenance);
        out.push_back(std::move(s));
      }
  }
  return out;
}

std::vector<double> StepTiming::pass_medians() const {
  return block_medians(samples_ns, pass_sizes);
}

}  // namespace hb::reports
