// Struct <-> JSON for schema hybridbench.report/2 (reports/schema/report.schema.json; version
// rules in reports/README.md). Every field is written; every field is required on reading except
// where noted (keys unknown to this version are ignored, so adding an optional field later does
// not need a new version). Units are in the names (_ns, _bytes). Version 1 files still read: they
// differ only in context.sweep, whose values were all strings.
// Non-finite numbers (a strategy whose output is NaN has NaN accuracy) are written as null and
// read back as NaN where the schema allows it (accuracy, trajectory).
#include "reports/schema.h"

#include <charconv>
#include <cmath>
#include <optional>
#include <set>
#include <span>

#include "core/error.h"
#include "core/memory.h"
#include "reports/accuracy_target.h"
#include "reports/capacity_json.h"
#include "reports/format.h"
#include "reports/json_checked.h"

namespace hb::reports {

using json = nlohmann::ordered_json;

namespace {

constexpr MemoryKind kAllKinds[] = {MemoryKind::local_dram, MemoryKind::remote_dram,
                                    MemoryKind::cxl,        MemoryKind::far,
                                    MemoryKind::hbm,        MemoryKind::accelerator};
static_assert(std::size(kAllKinds) == kMemoryKinds,
              "a new MemoryKind needs a name in the report schema");

// ---- context.sweep: text in memory, typed JSON in the file ------------------------------------
//
// In memory a sweep echo is text (what the resume check, the fleet fingerprint and the tables
// compare); in the file each value is a JSON number, boolean or array where its text is one, so
// a reader filters `seq_lens` numerically instead of parsing strings. The mapping is lossless by
// construction: text becomes a number only when formatting that number gives the same text back
// ("4096", "0.05"; not "0.050000" or "007", which stay strings), and list-valued keys are split on
// the commas their echo joins with.

// Keys whose value is a comma-joined list (SweepSpec::echo, model runs): written as arrays.
const std::set<std::string, std::less<>> kSweepListKeys = {
    "models", "kv_dtypes", "seq_lens", "batches", "strategies", "kv_budget", "model.platforms"};

json sweep_scalar(const std::string& text) {
  if (text == "true") return true;
  if (text == "false") return false;
  const char* b = text.data();
  const char* e = b + text.size();
  int64_t i = 0;
  if (auto r = std::from_chars(b, e, i);
      r.ec == std::errc() && r.ptr == e && std::to_string(i) == text)
    return i;
  double d = 0;
  if (auto r = std::from_chars(b, e, d);
      r.ec == std::errc() && r.ptr == e && std::isfinite(d) && format_shortest(d) == text)
    return d;
  return text;
}

json sweep_json(const std::map<std::string, std::string>& sweep) {
  json j = json::object();
  for (const auto& [k, v] : sweep) {
    if (!kSweepListKeys.contains(k)) {
      j[k] = sweep_scalar(v);
      continue;
    }
    json items = json::array();
    for (size_t start = 0; !v.empty();) {
      const size_t comma = v.find(',', start);
      items.push_back(sweep_scalar(v.substr(start, comma - start)));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    j[k] = std::move(items);
  }
  return j;
}

std::string sweep_scalar_text(const JsonReader& v) {
  const auto& j = v.json();
  if (j.is_string()) return j.get<std::string>();
  if (j.is_boolean()) return j.get<bool>() ? "true" : "false";
  if (j.is_number_unsigned()) return std::to_string(j.get<uint64_t>());
  if (j.is_number_integer()) return std::to_string(j.get<int64_t>());
  if (j.is_number_float()) return format_shortest(j.get<double>());
  v.fail("expected a string, number or boolean (a sweep option's value), found " +
         std::string(j.type_name()));
}

// `typed`: version 2 (numbers, booleans, arrays); version 1 files hold strings only.
std::map<std::string, std::string> read_sweep(const JsonReader& r, bool typed) {
  std::map<std::string, std::string> m;
  r.each_member([&](const std::string& k, const JsonReader& v) {
    if (!typed) {
      m[k] = v.as_string();
    } else if (v.json().is_array()) {
      std::string text;
      bool first = true;
      v.each_element([&](const JsonReader& item) {
        if (!first) text += ',';
        first = false;
        text += sweep_scalar_text(item);
      });
      m[k] = std::move(text);
    } else {
      m[k] = sweep_scalar_text(v);
    }
  });
  return m;
}

// ---- writing ---------------------------------------------------------------------------------

json string_map(const std::map<std::string, std::string>& m) {
  json j = json::object();
  for (const auto& [k, v] : m) j[k] = v;
  return j;
}

json summary_json(const SampleSummary& s) {
  return {{"count", s.count},
          {"mean_ns", s.mean},
          {"stdev_ns", s.stdev},
          {"min_ns", s.min},
          {"max_ns", s.max},
          {"median_ns", s.median},
          {"p10_ns", s.p10},
          {"p90_ns", s.p90},
          {"q1_ns", s.q1},
          {"q3_ns", s.q3},
          {"iqr_ns", s.iqr()},
          {"rel_stdev", s.rel_stdev()},
          {"robust_rel_noise", robust_rel_noise(s)}};
}

json timing_json(const Timing& t) {
  return {{"samples_ns", t.samples_ns}, {"summary", summary_json(t.summary)}};
}

json per_kind(const std::array<int64_t, kMemoryKinds>& a) {
  json j = json::object();
  for (auto k : kAllKinds) j[std::string(memory_kind_name(k))] = a[int(k)];
  return j;
}

json traffic_json(const Traffic& t) {
  json read = json::object(), written = json::object();
  for (auto p : {Processor::cpu, Processor::accelerator}) {
    read[processor_name(p)] = per_kind(t.bytes_read[int(p)]);
    written[processor_name(p)] = per_kind(t.bytes_written[int(p)]);
  }
  return {{"bytes_read", read},
          {"bytes_written", written},
          {"h2d_bytes", t.h2d_bytes},
          {"d2h_bytes", t.d2h_bytes},
          {"cpu_flops", t.cpu_flops},
          {"accelerator_flops", t.accelerator_flops},
          {"kernel_launches", t.kernel_launches},
          {"syncs", t.syncs},
          {"select_elements",
           {{"cpu", t.select_elements[int(Processor::cpu)]},
            {"accelerator", t.select_elements[int(Processor::accelerator)]}}},
          {"weight_bytes", t.weight_bytes}};
}

json topology_json(const TopologySummary& t) {
  json nodes = json::array();
  for (const auto& n : t.nodes)
    nodes.push_back({{"node", n.node},
                     {"kind", n.kind},
                     {"size_bytes", n.size_bytes},
                     {"emulated", n.emulated},
                     {"note", n.note}});
  return {{"facts", string_map(t.facts)}, {"nodes", nodes}};
}

json accelerator_json(const AcceleratorInfo& a) {
  return {{"kind", a.kind_name()},  {"name", a.name},
          {"emulated", a.emulated}, {"capacity_bytes", a.capacity_bytes},
          {"device", a.device},     {"numa_node", a.numa_node},
          {"details", a.details}};
}

json host_json(const HostRecord& h) {
  return {{"rank", h.rank},
          {"host", h.host},
          {"label", h.label},
          {"status", to_string(h.status)},
          {"error", h.error},
          {"points", h.points},
          {"os", h.os},
          {"cpu_model", h.cpu_model},
          {"simd_level", h.simd_level},
          {"binding", h.binding},
          {"accelerator", accelerator_json(h.accelerator)},
          {"topology", topology_json(h.topology)},
          {"system_settings", string_map(h.system_settings)}};
}

json context_json(const ReportContext& c) {
  json j = {{"tool_version", c.tool_version},
            {"git_commit", c.git_commit},
            {"build_type", c.build_type},
            {"compiler", c.compiler},
            {"cuda", c.cuda},
            {"cuda_version", c.cuda_version},
            {"date_utc", c.date_utc},
            {"host", c.host},
            {"os", c.os},
            {"cpu_model", c.cpu_model},
            {"simd_level", c.simd_level},
            {"topology", topology_json(c.topology)},
            {"system_settings", string_map(c.system_settings)},
            {"accelerator", accelerator_json(c.accelerator)},
            {"command_line", c.command_line},
            {"sweep", sweep_json(c.sweep)}};
  // Optional (fleet runs only), so single-process files stay exactly as before.
  if (!c.hosts.empty()) {
    json hosts = json::array();
    for (const auto& h : c.hosts) hosts.push_back(host_json(h));
    j["hosts"] = std::move(hosts);
  }
  if (!c.model_uncertainty.empty()) {
    json u = json::array();
    for (const auto& m : c.model_uncertainty)
      u.push_back({{"figure", m.figure},
                   {"rel", m.rel},
                   {"median_abs_error", m.median_abs_error},
                   {"rows", m.rows},
                   {"source", m.source}});
    j["model_uncertainty"] = std::move(u);
  }
  if (!c.assumptions.empty()) {
    json a = json::array();
    for (const auto& x : c.assumptions)
      a.push_back({{"platform", x.platform}, {"figure", x.figure}, {"text", x.text}});
    j["assumptions"] = std::move(a);
  }
  return j;
}

void check_vocabulary(const Point& p, size_t index) {
  auto bad = [&](const char* field, const std::string& v, const char* allowed) {
    throw Error("report point " + std::to_string(index) + " (" + p.axes.key() + ") has " + field +
                    " \"" + v + "\", which the report schema does not allow (allowed: " + allowed +
                    ")",
                "this is a bug in the code that filled the report; please report it", kExitFailure);
  };
  // The enums cannot hold an unknown name, only a value cast from a wrong integer.
  if (!kPointStatuses.contains(p.status))
    bad("status", std::to_string(static_cast<int>(p.status)), kPointStatuses.list().c_str());
  if (!kProvenances.contains(p.provenance))
    bad("provenance", std::to_string(static_cast<int>(p.provenance)), kProvenances.list().c_str());
  if (!kStopReasons.contains(p.step.stop_reason))
    bad("step.stop_reason", std::to_string(static_cast<int>(p.step.stop_reason)),
        kStopReasons.list().c_str());
  if (!p.layer_stack.present()) return;
  if (!kPointStatuses.contains(p.layer_stack.status))
    bad("layer_stack.status", std::to_string(static_cast<int>(p.layer_stack.status)),
        kPointStatuses.list().c_str());
  if (!kStopReasons.contains(p.layer_stack.step.stop_reason))
    bad("layer_stack.step.stop_reason",
        std::to_string(static_cast<int>(p.layer_stack.step.stop_reason)),
        kStopReasons.list().c_str());
}

// A point's step (and its layer stack's): the timing, why it stopped, its rounds when recorded.
json step_json(const StepTiming& t) {
  json j = {{"samples_ns", t.samples_ns},
            {"summary", summary_json(t.summary)},
            {"stop_reason", to_string(t.stop_reason)},
            {"warmup_steps", t.warmup_steps}};
  if (!t.pass_sizes.empty()) j["pass_sizes"] = t.pass_sizes;
  if (!t.round_slots.empty()) j["round_slots"] = t.round_slots;
  if (!t.repetition_rounds.empty()) j["repetition_rounds"] = t.repetition_rounds;
  if (!t.control_ns.empty()) j["control_ns"] = t.control_ns;
  return j;
}

// run --layers: written only on points that have a stack (an optional field, reports/README.md).
json layer_stack_json(const LayerStackFigures& s) {
  json j = {{"layers", s.layers},
            {"scored_layer", s.scored_layer},
            {"status", to_string(s.status)},
            {"reason", s.reason},
            {"step", step_json(s.step)},
            {"shortcut_error", s.shortcut_error ? json(*s.shortcut_error) : json(nullptr)}};
  if (!s.phases.empty()) {
    json phases = json::object();
    for (const auto& [name, t] : s.phases) phases[name] = timing_json(t);
    j["phases"] = phases;
  }
  if (s.rounds > 0) {  // paired: the interval and the rounds behind it
    j["shortcut_error_low"] = s.error_low;
    j["shortcut_error_high"] = s.error_high;
    j["shortcut_error_coverage"] = s.coverage;
    j["rounds"] = s.rounds;
  }
  return j;
}

json axes_json(const PointAxes& x) {
  return {{"model", x.model},
          {"family", x.family},
          {"seq_len", x.seq_len},
          {"batch", x.batch},
          {"strategy", x.strategy},
          {"kv_dtype", x.kv_dtype},
          {"workload", x.workload},
          {"accelerator", x.accelerator},
          {"decode_steps", x.decode_steps},
          {"page_tokens", x.page_tokens},
          {"extra", string_map(x.extra)}};
}

json placement_json(const std::vector<PlacedRegion>& regions) {
  json placement = json::array();
  for (const auto& r : regions) {
    json pages = json::object();
    for (const auto& [node, n] : r.observed_pages_per_node) pages[std::to_string(node)] = n;
    placement.push_back({{"role", r.role},
                         {"intended", r.intended},
                         {"bytes", r.bytes},
                         {"observed_pages_per_node", pages}});
    if (r.observed_huge_page_bytes >= 0)
      placement.back()["observed_huge_page_bytes"] = r.observed_huge_page_bytes;
  }
  return placement;
}

// Nothing scored (a failed point, --accuracy-steps 0): the figures are absent (null), never the
// defaults, which would read as a perfect score.
json accuracy_json(const Accuracy& a) {
  const bool scored = a.steps_scored > 0;
  json j = {{"steps_scored", a.steps_scored},
            {"rel_l2", scored ? json(a.rel_l2) : json(nullptr)},
            {"cosine", scored ? json(a.cosine) : json(nullptr)},
            {"max_abs_err", scored ? json(a.max_abs_err) : json(nullptr)},
            {"mass_recall", scored ? json(a.mass_recall) : json(nullptr)},
            // null, not -1, in the file: "no needle" should not look like a rate.
            {"needle_success_rate",
             scored && a.has_needle() ? json(a.needle_success_rate) : json(nullptr)}};
  if (scored && a.captured_rel_l2)  // optional: traces that carry `o`; null = NaN
    j["captured_rel_l2"] = *a.captured_rel_l2;
  if (scored && !a.recall_per_step.empty()) {
    json steps = json::array();
    for (const auto& r : a.recall_per_step)
      steps.push_back({{"step", r.step}, {"recall", r.recall}});
    j["recall_per_step"] = steps;
  }
  return j;
}

json trajectory_json(const std::vector<std::map<std::string, double>>& rows) {
  json trajectory = json::array();
  for (const auto& row : rows) {
    json r = json::object();
    for (const auto& [k, v] : row) r[k] = v;
    trajectory.push_back(r);
  }
  return trajectory;
}

json modeled_json(const ModeledAlongside& m) {
  json phases_ns = json::object();
  for (const auto& [k, v] : m.phase_median_ns) phases_ns[k] = v;
  return {{"platform", m.platform},
          {"overlap", m.overlap},
          {"step", timing_json(m.step)},
          {"phase_median_ns", phases_ns},
          {"error_vs_measured", m.error_vs_measured}};
}

json point_json(const Point& p) {
  json phases = json::object();
  for (const auto& [name, t] : p.phases) phases[name] = timing_json(t);
  json j = {{"axes", axes_json(p.axes)},
            {"status", to_string(p.status)},
            {"reason", p.reason},
            {"provenance", to_string(p.provenance)},
            {"step", step_json(p.step)},
            {"phases", phases},
            {"traffic_per_step", traffic_json(p.traffic_per_step)},
            {"placement", placement_json(p.placement)},
            {"accuracy", accuracy_json(p.accuracy)},
            {"strategy_params", string_map(p.strategy_params)},
            {"trajectory", trajectory_json(p.trajectory)}};
  j["role"] = to_string(p.role);
  if (p.kv_fit_fraction) j["kv_fit_fraction"] = *p.kv_fit_fraction;
  if (p.first_pass_traffic) j["first_pass_traffic"] = traffic_json(*p.first_pass_traffic);
  if (!p.warnings.empty()) j["warnings"] = p.warnings;
  if (p.attended_tokens)
    j["attended_tokens"] = {{"mean", p.attended_tokens->mean},
                            {"min", p.attended_tokens->min},
                            {"max", p.attended_tokens->max}};
  if (p.modeled.present()) j["modeled"] = modeled_json(p.modeled);
  if (p.ran_on.known()) j["ran_on"] = {{"rank", p.ran_on.rank}, {"host", p.ran_on.host}};
  if (p.layer_stack.present()) j["layer_stack"] = layer_stack_json(p.layer_stack);
  if (p.whole_model) j["whole_model"] = whole_model_json(*p.whole_model);
  return j;
}

// ---- reading ---------------------------------------------------------------------------------
//
// Every number is read with its range: a value no run can produce (a negative or 1e308 ns step,
// recall 1.7, a negative byte count) is an edited or damaged file, refused with its JSON path
// rather than ranked, compared or resumed. The limits are far beyond any real figure.

constexpr double kMaxStepNs = 1e15;              // 11.6 days: no decode step is longer
constexpr int64_t kMaxBytes = int64_t{1} << 60;  // 1 EiB
constexpr int64_t kMaxCount = int64_t{1} << 50;  // launches, syncs, steps
constexpr double kMaxFigure = 1e30;              // flops, selected elements, errors
constexpr int64_t kMaxSeqLen = int64_t{1} << 40;
constexpr double kRoundingSlack = 1e-6;  // a share or cosine computed in floating point

std::map<std::string, std::string> read_string_map(const JsonReader& r) {
  std::map<std::string, std::string> m;
  r.each_member([&](const std::string& k, const JsonReader& v) { m[k] = v.as_string(); });
  return m;
}

// The other fields' text in messages: "median_ns is 5 but the median of samples_ns is 7".
void check_summary_field(const JsonReader& summary, const char* key, double got, double want,
                         double tolerance) {
  if (std::abs(got - want) <= tolerance) return;
  summary.member(key).fail(std::string(key) + " is " + format_shortest(got) +
                           " but samples_ns give " + format_shortest(want));
}

SampleSummary read_summary(const JsonReader& r) {
  // iqr_ns, rel_stdev and robust_rel_noise are derived and written for readers of the file;
  // ignored here (and not required, so files without robust_rel_noise read the same).
  SampleSummary s;
  s.count = r.i64("count");
  s.mean = r.num("mean_ns");
  s.stdev = r.num("stdev_ns");
  s.min = r.num("min_ns");
  s.max = r.num("max_ns");
  s.median = r.num("median_ns");
  s.p10 = r.num("p10_ns");
  s.p90 = r.num("p90_ns");
  s.q1 = r.num("q1_ns");
  s.q3 = r.num("q3_ns");
  return s;
}

// A step takes time (> 0); a phase may take none (a step that copied nothing).
enum class SampleFloor { positive, zero };

std::vector<double> read_samples(const JsonReader& r, SampleFloor floor) {
  std::vector<double> v;
  r.each_element([&](const JsonReader& e) {
    const double ns = e.number_in(0, kMaxStepNs, "a time in ns, at most 1e15 (11.6 days)");
    if (floor == SampleFloor::positive && ns <= 0) e.fail("a step takes time: 0 ns is no sample");
    v.push_back(ns);
  });
  return v;
}

void read_timing(const JsonReader& r, Timing& t, SampleFloor floor = SampleFloor::zero) {
  t.samples_ns = read_samples(r.member("samples_ns"), floor);
  auto summary = r.member("summary");
  t.summary = read_summary(summary);
  // The summary is what tables print and the samples are what compare tests; a file where they
  // disagree was edited or produced by a broken writer, and would give inconsistent answers.
  if (t.summary.count != static_cast<int64_t>(t.samples_ns.size()))
    summary.member("count").fail("summary.count is " + std::to_string(t.summary.count) +
                                 " but samples_ns has " + std::to_string(t.samples_ns.size()) +
                                 " samples");
  const SampleSummary want = summarize(t.samples_ns);
  const double tol = 1e-6 * std::max(1.0, want.max);
  check_summary_field(summary, "median_ns", t.summary.median, want.median, tol);
  check_summary_field(summary, "mean_ns", t.summary.mean, want.mean, tol);
  check_summary_field(summary, "stdev_ns", t.summary.stdev, want.stdev, tol);
  check_summary_field(summary, "min_ns", t.summary.min, want.min, tol);
  check_summary_field(summary, "max_ns", t.summary.max, want.max, tol);
  check_summary_field(summary, "p10_ns", t.summary.p10, want.p10, tol);
  check_summary_field(summary, "p90_ns", t.summary.p90, want.p90, tol);
  check_summary_field(summary, "q1_ns", t.summary.q1, want.q1, tol);
  check_summary_field(summary, "q3_ns", t.summary.q3, want.q3, tol);
}

template <class E, size_t N>
E read_enum(const JsonReader& r, const std::string& key, const Vocabulary<E, N>& vocabulary) {
  auto m = r.member(key);
  const std::string v = m.as_string();
  const std::optional<E> e = vocabulary.parse(v);
  if (!e) m.fail("\"" + v + "\" is not one of: " + vocabulary.list());
  return *e;
}

// The first vocabulary also had "min-samples" and "min-time" (a sample or time minimum reached
// with the noise still high), which no runner ever wrote. A file holding one still loads, as
// the limit of its kind: a step count (max-steps) or a time (timeout); neither is "noise", so
// the point stays flagged as unconverged.
StopReason read_stop_reason(const JsonReader& step) {
  const std::string v = step.member("stop_reason").as_string();
  if (v == "min-samples") return StopReason::max_steps;
  if (v == "min-time") return StopReason::timeout;
  return read_enum(step, "stop_reason", kStopReasons);
}

std::array<int64_t, kMemoryKinds> read_per_kind(const JsonReader& r) {
  // Kinds absent from the file count 0, so a future memory kind does not break old files;
  // an unknown kind name is an error (it would be silently dropped otherwise).
  std::array<int64_t, kMemoryKinds> a{};
  r.each_member([&](const std::string& k, const JsonReader& v) {
    for (auto kind : kAllKinds)
      if (k == memory_kind_name(kind)) {
        a[int(kind)] = v.int_in(0, kMaxBytes, "bytes per step");
        return;
      }
    v.fail("unknown memory kind \"" + k + "\"");
  });
  return a;
}

Traffic read_traffic(const JsonReader& r) {
  Traffic t;
  auto read = r.member("bytes_read"), written = r.member("bytes_written");
  for (auto p : {Processor::cpu, Processor::accelerator}) {
    t.bytes_read[int(p)] = read_per_kind(read.member(processor_name(p)));
    t.bytes_written[int(p)] = read_per_kind(written.member(processor_name(p)));
  }
  t.h2d_bytes = r.i64_in("h2d_bytes", 0, kMaxBytes, "bytes per step");
  t.d2h_bytes = r.i64_in("d2h_bytes", 0, kMaxBytes, "bytes per step");
  t.cpu_flops = r.num_in("cpu_flops", 0, kMaxFigure, "operations per step");
  t.accelerator_flops = r.num_in("accelerator_flops", 0, kMaxFigure, "operations per step");
  t.kernel_launches = r.i64_in("kernel_launches", 0, kMaxCount, "launches per step");
  t.syncs = r.i64_in("syncs", 0, kMaxCount, "synchronisations per step");
  if (r.has("select_elements")) {  // optional: reports written before selection was counted
    auto s = r.member("select_elements");
    for (auto p : {Processor::cpu, Processor::accelerator})
      t.select_elements[int(p)] =
          s.num_in(processor_name(p), 0, kMaxFigure, "elements selected per step");
  }
  if (r.has("weight_bytes"))  // optional: before issue 18
    t.weight_bytes = r.i64_in("weight_bytes", 0, kMaxBytes, "bytes per step");
  return t;
}

TopologySummary read_topology(const JsonReader& topo) {
  TopologySummary t;
  t.facts = read_string_map(topo.member("facts"));
  topo.member("nodes").each_element([&](const JsonReader& n) {
    MemoryNodeSummary s;
    s.node = n.i32("node");
    s.kind = n.str("kind");
    s.size_bytes = n.i64("size_bytes");
    s.emulated = n.boolean("emulated");
    s.note = n.str("note");
    t.nodes.push_back(std::move(s));
  });
  return t;
}

AcceleratorInfo read_accelerator(const JsonReader& a) {
  AcceleratorInfo x;
  if (const std::string kind = a.str("kind"); !kind.empty()) {  // "": a rank that failed early
    x.kind = kAcceleratorKinds.parse(kind);
    if (x.kind == std::nullopt || x.kind == AcceleratorKind::auto_select)
      a.member("kind").fail("\"" + kind + "\" is not one of: cpu, cuda (or \"\" when unknown)");
  }
  x.name = a.str("name");
  x.emulated = a.boolean("emulated");
  x.capacity_bytes = a.i64("capacity_bytes");
  x.device = a.i32("device");
  x.numa_node = a.i32("numa_node");
  x.details = a.str("details");
  return x;
}

HostRecord read_host(const JsonReader& r) {
  HostRecord h;
  h.rank = r.i32("rank");
  h.host = r.str("host");
  h.label = r.str("label");
  h.status = read_enum(r, "status", kHostStatuses);
  h.error = r.str("error");
  h.points = r.i64("points");
  h.os = r.str("os");
  h.cpu_model = r.str("cpu_model");
  h.simd_level = r.str("simd_level");
  h.binding = r.str("binding");
  h.accelerator = read_accelerator(r.member("accelerator"));
  h.topology = read_topology(r.member("topology"));
  h.system_settings = read_string_map(r.member("system_settings"));
  return h;
}

ReportContext read_context(const JsonReader& r, int version) {
  ReportContext c;
  c.tool_version = r.str("tool_version");
  c.git_commit = r.str("git_commit");
  c.build_type = r.str("build_type");
  c.compiler = r.str("compiler");
  c.cuda = r.boolean("cuda");
  c.cuda_version = r.str("cuda_version");
  c.date_utc = r.str("date_utc");
  c.host = r.str("host");
  c.os = r.str("os");
  c.cpu_model = r.str("cpu_model");
  c.simd_level = r.str("simd_level");
  c.topology = read_topology(r.member("topology"));
  c.system_settings = read_string_map(r.member("system_settings"));
  c.accelerator = read_accelerator(r.member("accelerator"));
  c.command_line = r.str("command_line");
  c.sweep = read_sweep(r.member("sweep"), version >= 2);
  // Checked here, so a damaged target is named rather than replaced by the default later.
  if (c.sweep.contains(kAccuracyTargetKey)) {
    try {
      parse_accuracy_target(c.sweep.at(kAccuracyTargetKey));
    } catch (const Error& e) {
      r.member("sweep").member(kAccuracyTargetKey).fail(e.problem() + " (" + e.fix() + ")");
    }
  }
  if (r.has("hosts"))
    r.member("hosts").each_element([&](const JsonReader& h) { c.hosts.push_back(read_host(h)); });
  if (r.has("model_uncertainty"))
    r.member("model_uncertainty").each_element([&](const JsonReader& m) {
      c.model_uncertainty.push_back({m.str("figure"), m.num_in("rel", 0, 10, "a fraction"),
                                     m.num_in("median_abs_error", 0, 10, "a fraction"),
                                     static_cast<int>(m.num_in("rows", 0, 1e6, "a count")),
                                     m.str("source")});
    });
  if (r.has("assumptions"))
    r.member("assumptions").each_element([&](const JsonReader& a) {
      c.assumptions.push_back({a.str("platform"), a.str("figure"), a.str("text")});
    });
  return c;
}

// Optional: the machine control's time in each round, one per pass_sizes entry.
void read_control(const JsonReader& step, StepTiming& t) {
  if (!step.has("control_ns")) return;
  const auto control = step.member("control_ns");
  control.each_element([&](const JsonReader& n) {
    const double v = n.as_number();
    if (!(v > 0)) n.fail("a control time is a positive number of nanoseconds");
    t.control_ns.push_back(v);
  });
  if (t.control_ns.size() != t.pass_sizes.size())
    control.fail("one control time per round is needed: " + std::to_string(t.control_ns.size()) +
                 " for " + std::to_string(t.pass_sizes.size()) + " rounds");
}

void read_step(const JsonReader& step, StepTiming& t) {
  read_timing(step, t, SampleFloor::positive);
  t.stop_reason = read_stop_reason(step);
  t.warmup_steps = static_cast<int>(step.i64_in("warmup_steps", 0, 1 << 30, "a count of steps"));
  if (step.has("pass_sizes")) {  // optional: only runs with rounds (or passes) write it
    int64_t sum = 0;
    step.member("pass_sizes").each_element([&](const JsonReader& n) {
      const int64_t v = n.as_int();
      if (v < 0) n.fail("a pass cannot have a negative number of steps");
      t.pass_sizes.push_back(v);
      sum += v;
    });
    if (sum != static_cast<int64_t>(t.samples_ns.size()))
      step.member("pass_sizes")
          .fail("the passes hold " + std::to_string(sum) + " steps but samples_ns has " +
                std::to_string(t.samples_ns.size()));
  }
  if (step.has("round_slots")) {  // optional: run's interleaved rounds, one slot per round
    const auto slots = step.member("round_slots");
    slots.each_element([&](const JsonReader& n) {
      const int64_t v = n.as_int();
      if (v < 0 || v > 100000) n.fail("a place in a round's order is from 0 to the strategies");
      t.round_slots.push_back(static_cast<int>(v));
    });
    if (t.round_slots.size() != t.pass_sizes.size())
      slots.fail("one slot per round is needed: " + std::to_string(t.round_slots.size()) +
                 " slots for " + std::to_string(t.pass_sizes.size()) + " rounds");
  }
  if (step.has("repetition_rounds")) {  // optional: runs of several --repetitions passes
    const auto reps = step.member("repetition_rounds");
    int64_t sum = 0;
    reps.each_element([&](const JsonReader& n) {
      const int64_t v = n.as_int();
      if (v < 1) n.fail("a pass holds at least one round");
      t.repetition_rounds.push_back(v);
      sum += v;
    });
    if (sum != static_cast<int64_t>(t.pass_sizes.size()))
      reps.fail("the passes hold " + std::to_string(sum) + " rounds but pass_sizes has " +
                std::to_string(t.pass_sizes.size()));
  }
  read_control(step, t);
}

LayerStackFigures read_layer_stack(const JsonReader& r) {
  LayerStackFigures s;
  s.layers = r.i32("layers");
  if (s.layers < 2) r.member("layers").fail("a layer stack has at least 2 layers");
  s.scored_layer = r.i32("scored_layer");
  if (s.scored_layer < 0 || s.scored_layer >= s.layers)
    r.member("scored_layer").fail("the scored layer is one of the stack's, 0 to layers - 1");
  s.status = read_enum(r, "status", kPointStatuses);
  s.reason = r.str("reason");
  read_step(r.member("step"), s.step);
  if (r.has("phases"))  // optional: absent when the stack did not time
    r.member("phases").each_member(
        [&](const std::string& name, const JsonReader& t) { read_timing(t, s.phases[name]); });
  const auto error = r.member("shortcut_error");
  if (!error.json().is_null()) s.shortcut_error = error.as_number();
  if (r.has("rounds")) {  // optional: only a paired error has an interval
    s.rounds = r.i32("rounds");
    if (s.rounds < 1) r.member("rounds").fail("a paired error has at least one round");
    if (!s.shortcut_error) error.fail("an interval without its error");
    s.error_low = r.num("shortcut_error_low");
    s.error_high = r.num("shortcut_error_high");
    s.coverage = r.num("shortcut_error_coverage");
  }
  return s;
}

PointAxes read_axes(const JsonReader& x) {
  PointAxes a;
  a.model = x.name("model", "the model's name");
  a.family = x.str("family");
  a.seq_len = x.i64_in("seq_len", 1, kMaxSeqLen, "a context length in tokens");
  a.batch = static_cast<int>(x.i64_in("batch", 1, 1 << 24, "sequences per step"));
  a.strategy = x.name("strategy", "the strategy's name");
  a.kv_dtype = x.name("kv_dtype", "the KV element type (fp16, bf16, fp32)");
  a.workload = x.str("workload");
  a.accelerator = x.str("accelerator");
  a.decode_steps = static_cast<int>(x.i64_in("decode_steps", 0, 1 << 30, "a count of steps"));
  a.page_tokens = static_cast<int>(x.i64_in("page_tokens", 0, 1 << 30, "tokens per page"));
  a.extra = read_string_map(x.member("extra"));
  return a;
}

// Optional: reports from before it existed lack it.
std::optional<double> read_kv_fit_fraction(const JsonReader& r) {
  if (!r.has("kv_fit_fraction")) return std::nullopt;
  const auto f = r.member("kv_fit_fraction");
  const double v = f.as_number();
  if (!(v >= 0 && v <= 1)) f.fail("a share of the KV cache must be from 0 to 1");
  return v;
}

// Optional: absent when unscored and in older reports.
std::optional<AttendedTokens> read_attended_tokens(const JsonReader& r) {
  if (!r.has("attended_tokens")) return std::nullopt;
  const auto a = r.member("attended_tokens");
  AttendedTokens t{a.member("mean").as_number(), a.i64("min"), a.i64("max")};
  if (!(t.min >= 0 && t.min <= t.max && t.mean >= t.min - 1e-6 * t.max &&
        t.mean <= t.max * (1 + 1e-9)))
    a.fail("attended tokens must satisfy 0 <= min <= mean <= max");
  return t;
}

PlacedRegion read_region(const JsonReader& e) {
  PlacedRegion region;
  region.role = e.str("role");
  region.intended = e.str("intended");
  region.bytes = e.i64_in("bytes", 0, kMaxBytes, "a region's size");
  e.member("observed_pages_per_node")
      .each_member([&](const std::string& node, const JsonReader& n) {
        size_t used = 0;
        int id = -1;
        try {
          id = std::stoi(node, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used != node.size() || node.empty())
          n.fail("key \"" + node + "\" is not a NUMA node number");
        region.observed_pages_per_node[id] = n.int_in(0, kMaxBytes, "a count of pages");
      });
  if (e.has("observed_huge_page_bytes")) {
    region.observed_huge_page_bytes = e.i64("observed_huge_page_bytes");
    if (region.observed_huge_page_bytes < 0)
      e.member("observed_huge_page_bytes").fail("is negative");
  }
  return region;
}

Accuracy read_accuracy(const JsonReader& a) {
  Accuracy acc;
  const double one = 1 + kRoundingSlack;
  const char* share = "a share of the exact attention mass, 0 to 1";
  acc.steps_scored = a.i64_in("steps_scored", 0, kMaxCount, "a count of steps");
  acc.rel_l2 = a.member("rel_l2").number_or_nan_in(0, kMaxFigure, "a relative error, >= 0");
  acc.cosine = a.member("cosine").number_or_nan_in(-one, one, "a cosine similarity, -1 to 1");
  acc.max_abs_err = a.member("max_abs_err").number_or_nan_in(0, kMaxFigure, "an error, >= 0");
  acc.mass_recall = a.member("mass_recall").number_or_nan_in(0, one, share);
  auto needle = a.member("needle_success_rate");
  acc.needle_success_rate =
      needle.json().is_null() ? -1.0 : needle.number_in(0, 1, "a success rate, 0 to 1");
  if (a.has("captured_rel_l2"))  // optional: only points of a trace that carries `o`
    acc.captured_rel_l2 =
        a.member("captured_rel_l2").number_or_nan_in(0, kMaxFigure, "a relative error, >= 0");
  if (a.has("recall_per_step"))  // optional: reports from before issue 33 lack it
    a.member("recall_per_step").each_element([&](const JsonReader& e) {
      acc.recall_per_step.push_back({e.i64_in("step", 0, kMaxCount, "a step index"),
                                     e.member("recall").number_or_nan_in(0, one, share)});
    });
  return acc;
}

std::vector<std::map<std::string, double>> read_trajectory(const JsonReader& r) {
  std::vector<std::map<std::string, double>> rows;
  r.each_element([&](const JsonReader& row) {
    std::map<std::string, double> m;
    row.each_member(
        [&](const std::string& k, const JsonReader& v) { m[k] = v.as_number_or_nan(); });
    rows.push_back(std::move(m));
  });
  return rows;
}

// Optional: only measured points run with a platform profile.
void read_modeled(const JsonReader& m, ModeledAlongside& out) {
  out.platform = m.str("platform");
  if (out.platform.empty()) m.member("platform").fail("the platform name is empty");
  out.overlap = m.str("overlap");
  read_timing(m.member("step"), out.step);
  m.member("phase_median_ns").each_member([&](const std::string& k, const JsonReader& v) {
    out.phase_median_ns[k] = v.number_in(0, kMaxStepNs, "a time in ns, at most 1e15");
  });
  out.error_vs_measured = m.member("error_vs_measured").as_number_or_nan();
}

Point read_point(const JsonReader& r) {
  Point p;
  p.axes = read_axes(r.member("axes"));
  p.status = read_enum(r, "status", kPointStatuses);
  p.reason = r.str("reason");
  // Optional: reports from before roles say it by the strategy's name.
  p.role = r.has("role") ? read_enum(r, "role", kStrategyRoles) : role_from_name(p.axes.strategy);
  p.provenance = read_enum(r, "provenance", kProvenances);
  p.kv_fit_fraction = read_kv_fit_fraction(r);
  p.attended_tokens = read_attended_tokens(r);
  read_step(r.member("step"), p.step);
  if (p.status == PointStatus::ok && p.step.samples_ns.empty())
    r.member("step").member("samples_ns").fail("a point with status ok has at least one sample");
  r.member("phases").each_member(
      [&](const std::string& name, const JsonReader& t) { read_timing(t, p.phases[name]); });
  p.traffic_per_step = read_traffic(r.member("traffic_per_step"));
  if (r.has("first_pass_traffic"))  // optional: runs since issue 47
    p.first_pass_traffic = read_traffic(r.member("first_pass_traffic"));
  r.member("placement").each_element([&](const JsonReader& e) {
    p.placement.push_back(read_region(e));
  });
  p.accuracy = read_accuracy(r.member("accuracy"));
  p.strategy_params = read_string_map(r.member("strategy_params"));
  if (r.has("warnings"))  // optional: only points whose strategy warned
    r.member("warnings").each_element([&](const JsonReader& w) {
      p.warnings.push_back(w.as_string());
    });
  p.trajectory = read_trajectory(r.member("trajectory"));
  if (r.has("modeled")) read_modeled(r.member("modeled"), p.modeled);
  if (r.has("ran_on")) {
    auto on = r.member("ran_on");
    p.ran_on.rank = on.i32("rank");
    p.ran_on.host = on.str("host");
  }
  if (r.has("layer_stack")) p.layer_stack = read_layer_stack(r.member("layer_stack"));
  if (r.has("whole_model"))  // optional: absent in older reports and on untimed points
    p.whole_model = read_whole_model(r.member("whole_model"), p.axes.batch);
  return p;
}

}  // namespace

json point_to_json(const Point& point) {
  check_vocabulary(point, 0);
  return point_json(point);
}

Point point_from_json(const json& j, const std::string& source, const std::string& path) {
  return read_point(JsonReader(j, path, source));
}

json report_to_json(const Report& report) {
  json points = json::array();
  for (size_t i = 0; i < report.points.size(); ++i) {
    check_vocabulary(report.points[i], i);
    points.push_back(point_json(report.points[i]));
  }
  json speedups = json::array();
  for (const auto& s : report.speedups) {
    json e = {{"group_key", s.group_key},   {"strategy_a", s.strategy_a},
              {"strategy_b", s.strategy_b}, {"ratio", s.ratio},
              {"rel_noise", s.rel_noise},   {"provenance", to_string(s.provenance)}};
    if (s.paired())  // optional: points stepped in the same rounds
    {
      e["paired"] = {{"rounds", s.rounds},
                     {"ci_low", s.ci_low},
                     {"ci_high", s.ci_high},
                     {"ci_coverage", s.ci_coverage}};
      if (s.passes > 0) e["paired"]["passes"] = s.passes;  // optional: --repetitions runs
    }
    speedups.push_back(std::move(e));
  }
  // Insertion-ordered: "schema" first so `head` on a file shows what it is.
  json j = json::object();
  j["schema"] = schema_string();  // what this writer writes, even for a report read from /1
  // Optional: only an incomplete sweep has it (older readers ignore it; complete files are as
  // before). Second, so `head` shows it right after what the file is.
  if (report.interruption.interrupted) {
    j["interrupted"] = true;
    j["interrupted_reason"] = report.interruption.reason;
  }
  j["context"] = context_json(report.context);
  j["points"] = std::move(points);
  j["speedups"] = std::move(speedups);
  if (!report.capacity.empty()) j["capacity"] = capacity_json(report.capacity);  // optional
  return j;
}

Report report_from_json(const json& j, const std::string& source) {
  JsonReader root(j, "$", source);
  if (!j.is_object() || !j.contains("schema"))
    throw Error(source + ": JSON, but not a hybridbench report (no top-level \"schema\" field)",
                "pass a file written by `hybridbench run` (its first field is \"schema\": \"" +
                    schema_string() + "\")");
  const std::string schema = root.str("schema");
  int version = 0;
  for (int v = kOldestReadableSchemaVersion; v <= kSchemaVersion; ++v)
    if (schema == std::string(kSchemaId) + "/" + std::to_string(v)) version = v;
  if (version == 0) {
    const bool ours = schema.rfind(std::string(kSchemaId) + "/", 0) == 0;
    throw Error(
        source + ": schema \"" + schema + "\" is " +
            (ours ? "a report version this hybridbench cannot read"
                  : "not a hybridbench report schema") +
            " (this build reads \"" + std::string(kSchemaId) + "/" +
            std::to_string(kOldestReadableSchemaVersion) + "\" to \"" + schema_string() + "\")",
        ours ? "use the hybridbench version that wrote it (see context.tool_version in the file), "
               "or re-run the sweep with this version"
             : "pass a file written by `hybridbench run`");
  }
  Report report;
  report.schema = schema;
  if (root.has("interrupted")) {  // optional: only an incomplete sweep's report has it
    report.interruption.interrupted = root.boolean("interrupted");
    if (report.interruption.interrupted)
      report.interruption.reason = root.str("interrupted_reason");
  }
  report.context = read_context(root.member("context"), version);
  // Points are told apart by their axes (compare and the tables look them up so): a second point
  // with the same axes would be counted, ranked or compared twice.
  std::map<std::string, std::string> seen;  // axes key -> JSON path of its point
  root.member("points").each_element([&](const JsonReader& p) {
    report.points.push_back(read_point(p));
    const auto [it, fresh] = seen.emplace(report.points.back().axes.key(), p.path());
    if (!fresh) p.fail("the same point as " + it->second + " (axes " + it->first + ")");
  });
  root.member("speedups").each_element([&](const JsonReader& s) {
    Speedup sp;
    sp.group_key = s.str("group_key");
    sp.strategy_a = s.str("strategy_a");
    sp.strategy_b = s.str("strategy_b");
    sp.ratio = s.num_in("ratio", 1e-15, 1e15, "a ratio of two step times, > 0");
    sp.rel_noise = s.num_in("rel_noise", 0, kMaxFigure, "a relative noise, >= 0");
    sp.provenance = read_enum(s, "provenance", kProvenances);
    if (s.has("paired")) {  // optional: points stepped in the same rounds
      const auto p = s.member("paired");
      sp.rounds = p.i32("rounds");
      sp.ci_low = p.num("ci_low");
      sp.ci_high = p.num("ci_high");
      sp.ci_coverage = p.num("ci_coverage");
      if (p.has("passes")) {
        sp.passes = p.i32("passes");
        if (sp.passes < 2) p.member("passes").fail("an interval over passes needs at least 2");
      }
      if (!(sp.rounds >= 2 && sp.ci_low <= sp.ratio && sp.ratio <= sp.ci_high &&
            sp.ci_coverage >= 0 && sp.ci_coverage <= 1))
        p.fail("a paired ratio needs rounds >= 2, ci_low <= ratio <= ci_high, coverage in [0, 1]");
    }
    report.speedups.push_back(std::move(sp));
  });
  if (root.has("capacity")) report.capacity = read_capacity(root.member("capacity"));
  return report;
}

}  // namespace hb::reports
