#include "bench/sweep_spec.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <set>

#include "core/error.h"
#include "core/model_presets.h"
#include "core/parse.h"
#include "core/thread_pool.h"
#include "bench/trace.h"
#include "memtier/cpulist.h"
#include "reports/format.h"

namespace hb::bench {

std::vector<std::string> split_list(const std::string& s, const std::string& what) {
  std::vector<std::string> out;
  size_t i = 0;
  bool empty_item = false;
  while (i <= s.size()) {
    size_t j = s.find(',', i);
    if (j == std::string::npos) j = s.size();
    std::string item = s.substr(i, j - i);
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (item.empty())
      empty_item = true;
    else if (std::find(out.begin(), out.end(), item) != out.end())
      throw Error(what + " '" + s + "' lists '" + item + "' twice",
                  "give each item once (a repeated item would run or count twice)");
    else
      out.push_back(item);
    i = j + 1;
  }
  // An empty item is a slip (a stray or doubled comma), never a value: "1,,2", "4k,".
  if (empty_item && !out.empty())
    throw Error(what + " '" + s + "' has an empty item",
                "remove the stray comma: items are separated by single commas, e.g. 1,2,4");
  return out;
}

int64_t parse_token_count(const std::string& s, const std::string& what) {
  return parse::count(s, what, 1, kMaxTokens);
}

namespace {

// Points of one range item, counted before any is built so a huge range fails at once.
int64_t arithmetic_points(int64_t from, int64_t to, int64_t inc) {
  return (to - from) / inc + 1;
}  // 0 <= from <= to

int64_t geometric_points(int64_t from, int64_t to, double factor) {
  // Steps of the loop below (not distinct lengths: x1.0001 repeats small ones), capped so the
  // count itself is cheap and cannot overflow.
  int64_t n = 0;
  for (double v = static_cast<double>(from);
       v <= static_cast<double>(to) * (1 + 1e-9) && n <= kMaxSeqLenPoints; v *= factor)
    ++n;
  return n;
}

}  // namespace

std::vector<int64_t> parse_seq_lens(const std::string& s, const std::string& what) {
  std::set<int64_t> out;
  const std::string too_many_fix =
      "a sweep takes at most " + std::to_string(kMaxSeqLenPoints) +
      " sequence lengths: use a larger step (e.g. +1k or x2) or a shorter range";
  // A length given twice (4k,4096, or 4k beside a range that holds it) is refused, not merged.
  auto add = [&](int64_t v, const std::string& item) {
    if (!out.insert(v).second)
      throw Error(what + " '" + s + "' gives the length " + std::to_string(v) + " twice ('" + item +
                      "' repeats it)",
                  "give each length once");
  };
  for (const auto& item : split_list(s, what)) {
    const size_t c1 = item.find(':');
    if (c1 == std::string::npos) {
      add(parse_token_count(item, what), item);
    } else {
      const size_t c2 = item.find(':', c1 + 1);
      const std::string fix = "ranges are FROM:TO:xFACTOR or FROM:TO:+STEP, e.g. 4k:128k:x2";
      if (c2 == std::string::npos) throw Error(what + " range '" + item + "' has no step", fix);
      const int64_t from = parse_token_count(item.substr(0, c1), what + " range start");
      const int64_t to = parse_token_count(item.substr(c1 + 1, c2 - c1 - 1), what + " range end");
      const std::string step = item.substr(c2 + 1);
      if (step.size() < 2 || (step[0] != 'x' && step[0] != '+'))
        throw Error(what + " range '" + item + "' has a bad step '" + step + "'", fix);
      if (from > to) throw Error(what + " range '" + item + "' runs backwards", fix);
      int64_t points = 0;
      if (step[0] == 'x') {
        const double f = parse::real(step.substr(1), what + " range factor",
                                     parse::RealRange{1, 1024, true, false});
        points = geometric_points(from, to, f);
        if (points <= kMaxSeqLenPoints)
          for (double v = static_cast<double>(from); v <= static_cast<double>(to) * (1 + 1e-9);
               v *= f)
            add(std::min(to, static_cast<int64_t>(v + 0.5)),  // the 1e-9 slack never passes TO
                item);
      } else {
        const int64_t inc = parse_token_count(step.substr(1), what + " range step");
        points = arithmetic_points(from, to, inc);
        if (points <= kMaxSeqLenPoints)
          for (int64_t v = from; v <= to; v += inc) add(v, item);  // to + inc <= 2^41: no overflow
      }
      if (points > kMaxSeqLenPoints)
        throw Error(what + " range '" + item + "' has " +
                        (step[0] == 'x' ? "more than " + std::to_string(kMaxSeqLenPoints)
                                        : std::to_string(points)) +
                        " points, more than the " + std::to_string(kMaxSeqLenPoints) +
                        " a sweep may have",
                    too_many_fix);
    }
    if (static_cast<int64_t>(out.size()) > kMaxSeqLenPoints)
      throw Error(what + " '" + s + "' has more than " + std::to_string(kMaxSeqLenPoints) +
                      " sequence lengths",
                  too_many_fix);
  }
  if (out.empty())
    throw Error(what + " '" + s + "' gives no sequence lengths",
                "pass e.g. " + what + " 4k,32k or 4k:128k:x2");
  return {out.begin(), out.end()};
}

std::vector<int> parse_batches(const std::string& s, const std::string& what) {
  std::vector<int> out;
  for (const auto& b : split_list(s, what)) {
    const int v = static_cast<int>(parse::integer(b, what, 1, kMaxBatch));
    if (std::find(out.begin(), out.end(), v) != out.end())
      throw Error(what + " '" + s + "' gives the batch " + std::to_string(v) + " twice",
                  "give each batch size once");
    out.push_back(v);
  }
  if (out.empty())
    throw Error(what + " '" + s + "' gives no batch size", "pass e.g. " + what + " 1,4,16");
  return out;
}

std::pair<std::string, std::string> parse_strategy_option(const std::string& s,
                                                          const std::string& what) {
  const size_t eq = s.find('=');
  const size_t dot = s.find('.');
  if (eq == std::string::npos || dot == std::string::npos || dot > eq)
    throw Error(what + " '" + s + "' is not STRATEGY.KEY=VALUE",
                "e.g. " + what + " h2o.heavy_ratio=0.2");
  std::string key = s.substr(0, eq), value = s.substr(eq + 1);
  // strtod reads every spelling of NaN and infinity (and overflows to infinity): a value it takes
  // whole but that is not finite is a number no strategy can use.
  char* end = nullptr;
  const double v = std::strtod(value.c_str(), &end);
  if (!value.empty() && end == value.c_str() + value.size() && !std::isfinite(v))
    throw Error(what + " " + key + "='" + value + "' is not a finite number",
                "pass a finite value, e.g. " + what + " h2o.heavy_ratio=0.2");
  return {std::move(key), std::move(value)};
}

KvBudget parse_kv_budget(const std::string& item, const std::string& what) {
  KvBudget b;
  if (!item.empty() && item.back() == '%') {
    b.unit = KvBudget::Unit::percent;
    b.percent =
        parse::real(item.substr(0, item.size() - 1), what + " share of the context",
                    parse::RealRange{0, 100, true, false});  // (0, 100]: nan, 0, 101 refused
  } else {
    b.tokens =
        parse::count(item, what + " (tokens, or a share of the context such as 6%)", 1, kMaxTokens);
  }
  return b;
}

std::vector<KvBudget> parse_kv_budgets(const std::string& s, const std::string& what) {
  std::vector<KvBudget> out;
  for (const auto& item : split_list(s, what)) {
    const KvBudget b = parse_kv_budget(item, what);
    if (std::find(out.begin(), out.end(), b) != out.end())
      throw Error(what + " '" + s + "' gives the budget " + b.to_string() + " twice",
                  "give each budget once");
    out.push_back(b);
  }
  if (out.empty())
    throw Error(what + " '" + s + "' gives no budget",
                "pass tokens or a share of the context, e.g. " + what + " 512,2048 or 6%");
  return out;
}

int64_t KvBudget::tokens_at(int64_t seq_len) const {
  if (unit == Unit::tokens) return tokens;
  return std::max<int64_t>(1, std::llround(percent / 100.0 * static_cast<double>(seq_len)));
}

std::string KvBudget::to_string() const {
  return unit == Unit::tokens ? std::to_string(tokens) : reports::format_shortest(percent) + "%";
}

std::vector<int> parse_kv_nodes(const std::string& s, const std::string& what) {
  std::vector<int> out;
  for (const auto& item : split_list(s, what))
    out.push_back(static_cast<int>(parse::integer(item, what, 0, memtier::kMaxListId)));
  return out;
}

std::vector<DType> parse_kv_dtypes(const std::string& s, const std::string& what) {
  std::vector<DType> out;
  for (const auto& item : split_list(s, what)) out.push_back(parse_dtype(item));
  if (out.empty())
    throw Error(what + " '" + s + "' gives no KV element type", "pass e.g. " + what + " fp16");
  return out;
}

std::optional<std::string> trace_path(const std::string& workload) {
  static const std::string kPrefix = "trace:";
  if (workload.rfind(kPrefix, 0) != 0) return std::nullopt;
  return workload.substr(kPrefix.size());
}

SweepWorkload open_workload(const std::string& text) {
  if (const auto path = trace_path(text)) return std::make_shared<const TraceFile>(*path);
  return parse_workload_spec(text);  // family and knobs
}

const TraceFile* ResolvedSweep::trace() const {
  const auto* t = std::get_if<std::shared_ptr<const TraceFile>>(&workload);
  return t ? t->get() : nullptr;
}

std::string ResolvedSweep::workload_label() const {
  if (const TraceFile* t = trace()) return t->identity();
  return std::get<WorkloadSpec>(workload).label();
}

const ModelPreset& SweepSpec::model(const std::string& name) const {
  for (const auto& m : own_models)
    if (m.name == name) return m;
  return find_model_preset(name);
}

// A trace's own model knows its attention only: layer scope would need the layer's widths.
void SweepSpec::check_scope_fits_models() const {
  for (const auto& m : models)
    if (scope == Scope::layer && model(m).layers == 0)
      throw Error("model " + m + " has only an attention shape (" + model(m).shape.to_string() +
                      "), no layer dimensions, so --scope layer cannot time its decoder layer",
                  "pass --scope attention, or --model PRESET with the trace's attention shape "
                  "(see --list-models)");
}

ResolvedSweep SweepSpec::validate() const { return validate(open_workload(workload)); }

ResolvedSweep SweepSpec::validate(SweepWorkload opened) const {
  check_axes();
  check_sampling();
  check_machine();
  check_scope_fits_models();
  check_layers();
  ResolvedSweep out{*this, std::move(opened)};
  // Every row a point will read, against every model, length and KV type, before any runs.
  if (const TraceFile* t = out.trace()) t->check_sweep(*this);
  return out;
}

void SweepSpec::check_axes() const {
  for (const auto& m : models) model(m);
  if (models.empty())
    throw Error("no model given", "pass --model llama-3.1-8b (see --list-models)");
  if (kv_dtypes.empty()) throw Error("no KV element type given", "pass --kv-dtype fp16");
  if (strategies.empty()) throw Error("no strategy given", "pass --strategy all or a list");
  for (int b : batches)
    if (b <= 0 || b > kMaxBatch)
      throw Error("batch " + std::to_string(b) + " is out of range",
                  "use --batch between 1 and " + std::to_string(kMaxBatch));
  for (int64_t n : seq_lens)
    if (n <= 0)
      throw Error("sequence length " + std::to_string(n) + " leaves nothing to attend to",
                  "use --seq-len >= 1");
  for (int64_t n : seq_lens)
    if (n > kMaxTokens)
      throw Error("sequence length " + std::to_string(n) + " is out of range",
                  "use --seq-len <= " + std::to_string(kMaxTokens));
  // Typed values a library caller may have built by hand: the parser's own limits.
  for (const KvBudget& b : kv_budgets)
    if (b.unit == KvBudget::Unit::tokens ? b.tokens < 1 || b.tokens > kMaxTokens
                                         : !(b.percent > 0 && b.percent <= 100))
      throw Error("--kv-budget " + b.to_string() + " is out of range",
                  "pass tokens from 1 or a share of the context in (0, 100]%, e.g. 512 or 6%");
}

void SweepSpec::check_sampling() const {
  if (decode_steps > kMaxDecodeSteps)
    throw Error("--decode-steps " + std::to_string(decode_steps) + " is out of range",
                "use --decode-steps from 1 to " + std::to_string(kMaxDecodeSteps));
  if (stop.warmup_steps < 0)
    throw Error("--warmup " + std::to_string(stop.warmup_steps) + " is negative",
                "pass --warmup 0 or more");
  if (accuracy_steps < -1)
    throw Error("--accuracy-steps " + std::to_string(accuracy_steps) + " is out of range",
                "pass -1 (all) or a count >= 0");
  if (decode_steps < stop.warmup_steps + 1)
    throw Error("--decode-steps " + std::to_string(decode_steps) + " leaves no timed step after " +
                    std::to_string(stop.warmup_steps) + " warm-up steps",
                "raise --decode-steps or lower --warmup");
  if (stop.min_samples < 1) throw Error("--min-samples must be >= 1", "pass --min-samples 5");
  if (stop.max_samples < 0 || stop.max_samples > kMaxDecodeSteps)
    throw Error("--max-samples " + std::to_string(stop.max_samples) + " is out of range",
                "pass 0 (up to " + std::to_string(StopCriteria::kDefaultPasses) +
                    " passes over the decode positions) to " + std::to_string(kMaxDecodeSteps));
  if (stop.max_samples > 0 && stop.max_samples < stop.min_samples)
    throw Error("--max-samples " + std::to_string(stop.max_samples) + " is below --min-samples " +
                    std::to_string(stop.min_samples) + ": no point could take the samples asked",
                "raise --max-samples to at least --min-samples, or pass --max-samples 0");
  if (stop.rounds < 1 || stop.rounds > 1000)
    throw Error("--rounds " + std::to_string(stop.rounds) + " is out of range",
                "use 1 to 1000 (6 or more give 95% intervals on the speedups)");
  if (repetitions < 1 || repetitions > 100)
    throw Error("--repetitions " + std::to_string(repetitions) + " is out of range",
                "use 1 to 100 (3-5 gate CI well)");
  if (!(tie_margin >= 0 && tie_margin <= 1))
    throw Error("--tie-margin must be >= 0% and <= 100%", "pass e.g. --tie-margin 3 (3%)");
  // Written !(x > 0) so NaN fails too.
  if (!(stop.max_noise > 0 && stop.max_noise <= 1))
    throw Error("--max-noise must be > 0% and <= 100%", "pass e.g. --max-noise 5 (5%)");
  if (!(stop.timeout_s > 0 && stop.timeout_s <= kMaxSeconds))
    throw Error("--timeout must be > 0 and <= " + std::to_string(kMaxSeconds) + " seconds",
                "pass e.g. --timeout 30");
  if (!(stop.min_time_s >= 0 && stop.min_time_s <= kMaxSeconds))
    throw Error("--min-time must be >= 0 and <= " + std::to_string(kMaxSeconds) + " seconds",
                "pass e.g. --min-time 1");
}

void SweepSpec::check_machine() const {
  if (!kKvPages.contains(kv_pages))
    throw Error("unknown KV page kind " + std::to_string(static_cast<int>(kv_pages)),
                "pass --kv-pages " + kKvPages.list());
  if (accelerator.capacity_bytes < 0)
    throw Error("accelerator memory " + std::to_string(accelerator.capacity_bytes) + " is negative",
                "pass e.g. --accelerator-memory 2G");
  // Threads: more than the CPUs this process may run on only time-slice, and a typo (200000) would
  // exhaust the machine's process ids before the first point; refused before any thread starts.
  const int cpus = static_cast<int>(allowed_cpus().size());
  for (const auto& [name, n] :
       {std::pair<const char*, int>{"--accelerator-threads", accelerator.cpu_threads},
        std::pair<const char*, int>{"--host-threads", host_threads}})
    if (n < 0 || n > cpus)
      throw Error(std::string(name) + " " + std::to_string(n) +
                      " is out of range: this process may run on " + std::to_string(cpus) +
                      " CPUs (sched_getaffinity)",
                  std::string("pass ") + name + " from 0 (automatic) to " + std::to_string(cpus));
  if (page_tokens <= 0 || page_tokens % 16 != 0)
    throw Error(
        "--page-tokens " + std::to_string(page_tokens) + " is not a positive multiple of 16",
        "use 16, 32 or 64");
  if (microbatches < 0 || microbatches > kMaxBatch)
    throw Error("--microbatches " + std::to_string(microbatches) + " is out of range",
                "use 0 (the default: 2 from batch 2 on) up to the batch size");
  if (microbatches > 1 && scope != Scope::layer)
    throw Error("--microbatches " + std::to_string(microbatches) +
                    " needs --scope layer (attention alone has no layer work to overlap)",
                "drop --microbatches, or use --scope layer");
  if (share_count < 1 || share_index < 0 || share_index >= share_count)
    throw Error("sweep share " + std::to_string(share_index) + " of " +
                    std::to_string(share_count) + " is out of range",
                "this is a bug in the fleet code; please report it", kExitFailure);
}

void SweepSpec::check_layers() const {
  const std::string given = "--layers " + std::to_string(layers);
  if (layers < 1 || layers > kMaxStackLayers)
    throw Error(given + " is out of range", "use 1 (one layer, the default) or " +
                                                std::to_string(kMinStackLayers) +
                                                " up to the model's layer count");
  if (layers == 1) return;
  if (layers < kMinStackLayers)
    throw Error(given +
                    " is too few layers to check the whole-model shortcut (per-layer state "
                    "and cache effects show over a model's depth)",
                "use --layers " + std::to_string(kMinStackLayers) + " or more, or 1");
  if (trace_path(workload))
    throw Error(given + " needs each layer's own KV cache, and a trace holds one layer's",
                "drop --layers, or use a synthetic --workload (e.g. llama-like)");
  for (const auto& m : models) {
    const ModelPreset& p = model(m);
    if (layers > p.layers)
      throw Error(given + " is more than " + m + "'s " + std::to_string(p.layers) + " layers",
                  "use --layers " + std::to_string(kMinStackLayers) + " to " +
                      std::to_string(p.layers) + " for " + m);
  }
}

std::map<std::string, std::string> ResolvedSweep::echo() const {
  // Shortest text that reads back as the same double ("0.05", not std::to_string's "0.050000"),
  // so the report writes it as a JSON number (reports/schema.cpp keeps text that would not
  // round-trip a string).
  const auto real = [](double v) { return reports::format_shortest(v); };
  auto join = [](const auto& v) {
    std::string s;
    for (const auto& x : v) {
      using T = std::decay_t<decltype(x)>;
      if (!s.empty()) s += ",";
      if constexpr (std::is_same_v<T, DType>)
        s += dtype_name(x);
      else if constexpr (std::is_same_v<T, KvBudget>)
        s += x.to_string();
      else if constexpr (std::is_arithmetic_v<T>)
        s += std::to_string(x);
      else
        s += x;
    }
    return s;
  };
  const SweepSpec& s = spec;
  std::map<std::string, std::string> e = {
      {"models", join(s.models)},
      {"kv_dtypes", join(s.kv_dtypes)},
      {"seq_lens", join(s.seq_lens)},
      {"batches", join(s.batches)},
      {"strategies", join(s.strategies)},
      {"decode_steps", std::to_string(s.decode_steps)},
      {"page_tokens", std::to_string(s.page_tokens)},
      {"scope", to_string(s.scope)},
      {"microbatches", s.microbatches ? std::to_string(s.microbatches) : "auto"},
      // A trace as given (its path); a synthetic workload by its label.
      {"workload", trace() ? s.workload : workload_label()},
      {"seed", std::to_string(s.seed)},
      {"accuracy_steps", std::to_string(s.accuracy_steps)},
      {"accuracy_target", s.accuracy_target},
      {"repetitions", std::to_string(s.repetitions)},
      {"rounds", std::to_string(s.stop.rounds)},
      {"warmup_steps", std::to_string(s.stop.warmup_steps)},
      {"min_samples", std::to_string(s.stop.min_samples)},
      {"max_samples", std::to_string(s.stop.max_samples)},
      {"max_noise_fraction", real(s.stop.max_noise)},  // --max-noise 5 -> 0.05
      {"tie_margin_fraction", real(s.tie_margin)},     // --tie-margin 3 -> 0.03
      {"min_time_s", real(s.stop.min_time_s)},
      {"timeout_s", real(s.stop.timeout_s)},
      {"accelerator", kAcceleratorKinds.name(s.accelerator.kind)},
      {"accelerator_capacity_bytes", std::to_string(s.accelerator.capacity_bytes)}};
  if (!s.kv_budgets.empty())
    e["kv_budget"] = join(s.kv_budgets);                     // only when set: old echoes match
  if (s.layers > 1) e["layers"] = std::to_string(s.layers);  // the same
  if (s.repetitions > 1) e["pass_process"] = s.pass_per_process ? "fresh" : "same";
  if (!s.kv_nodes.empty()) e["kv_node"] = join(s.kv_nodes);
  if (!s.emulate_cxl.empty()) e["emulate_cxl"] = s.emulate_cxl;
  e["kv_pages"] = kKvPages.name(s.kv_pages);
  for (const auto& [k, v] : s.strategy_options) e["opt." + k] = v;
  // A model given by its config.json: the file it was read from (a trace's is the workload).
  for (const auto& m : s.own_models)
    if (m.family != ModelFamily::trace) e["model_source." + m.name] = m.source;
  return e;
}

}  // namespace hb::bench
