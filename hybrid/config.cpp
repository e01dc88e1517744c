#include "hybrid/config.h"

#include "core/error.h"

namespace hb::hybrid {

namespace {

// Whole-number options are read through StrategyOptions::count, checked before any cast: decode
// steps (intervals) up to a million, tier indexes up to 255 (checked against the tiers at plan).
constexpr int64_t kMaxSteps = 1'000'000;
constexpr int64_t kMaxTiers = 255;

bool parse_bool(const std::string& full, const std::string& v) {
  if (v == "1" || v == "on" || v == "true" || v == "yes") return true;
  if (v == "0" || v == "off" || v == "false" || v == "no") return false;
  throw Error("option " + full + "=" + v + " is not on/off",
              "pass " + full + "=1 or " + full + "=0");
}

bool flag(const StrategyOptions& o, const std::string& n, const std::string& key, bool def) {
  return parse_bool(n + "." + key, o.text(n, key, def ? "1" : "0"));
}

// A closed choice read through its vocabulary.
template <class E, size_t N>
E choice(const StrategyOptions& o, const std::string& name, const std::string& key, E def,
         const Vocabulary<E, N>& vocab) {
  const std::string v = o.text(name, key, vocab.name(def));
  if (auto e = vocab.parse(v)) return *e;
  throw Error("option " + name + "." + key + "=" + v + " is not one of " + vocab.list(),
              "pass --opt " + name + "." + key + "=<" + vocab.list() + ">");
}

// Mechanism 3's policy: `kv_mapping=`, or `mapping=` as it was spelt before (the paper's name
// for the mechanism is the key now); both at once must agree.
KvMappingPolicy read_kv_mapping(const StrategyOptions& o, const std::string& n,
                                KvMappingPolicy def) {
  const KvMappingPolicy p = choice(o, n, "kv_mapping", def, kKvMappingPolicies);
  if (!o.all().count(n + ".mapping")) return p;  // old key not asked for: not listed as known
  const KvMappingPolicy old = choice(o, n, "mapping", def, kKvMappingPolicies);
  if (o.all().count(n + ".kv_mapping") && old != p)
    throw Error("options " + n + ".kv_mapping and " + n + ".mapping (its old spelling) disagree",
                "pass only --opt " + n + ".kv_mapping=<" + kKvMappingPolicies.list() + ">");
  return old;
}

enum class SchedulerMode { feedback, fixed };
inline constexpr Vocabulary<SchedulerMode, 2> kSchedulerModes{{"feedback", "static"}};
enum class BoundaryMode { adaptive, fixed };
inline constexpr Vocabulary<BoundaryMode, 2> kBoundaryModes{{"adaptive", "fixed"}};

void read_scheduler(const StrategyOptions& o, const std::string& n, const SchedulerConfig& d,
                    SchedulerConfig& c) {
  c.adaptive =
      choice(o, n, "scheduler", d.adaptive ? SchedulerMode::feedback : SchedulerMode::fixed,
             kSchedulerModes) == SchedulerMode::feedback;
  c.adapt_boundary =
      choice(o, n, "boundary", d.adapt_boundary ? BoundaryMode::adaptive : BoundaryMode::fixed,
             kBoundaryModes) == BoundaryMode::adaptive;
  c.adapt_ratio = flag(o, n, "adapt_ratio", d.adapt_ratio);
  c.interval = static_cast<int>(o.count(n, "interval", d.interval, 1, kMaxSteps));
  c.ratio_min = o.number(n, "ratio_min", d.ratio_min);
  c.ratio_max = o.number(n, "ratio_max", d.ratio_max);
  c.ratio_up = o.number(n, "ratio_up", d.ratio_up);
  c.ratio_down = o.number(n, "ratio_down", d.ratio_down);
  c.boundary_gain = o.number(n, "boundary_gain", d.boundary_gain);
  c.dead_band = o.number(n, "dead_band", d.dead_band);
  c.hold_share = o.number(n, "hold_share", d.hold_share);
  c.cost_weight = o.number(n, "cost_weight", d.cost_weight);
  c.cpu_k_cap = o.count(n, "cpu_k_cap", d.cpu_k_cap, 0, kMaxOptionTokens);
  c.adapt_cpu_k_cap = flag(o, n, "adapt_cpu_k_cap", d.adapt_cpu_k_cap);
  if (!(c.ratio_min > 0 && c.ratio_min <= c.ratio_max && c.ratio_max <= 1))
    throw Error("options " + n + ".ratio_min/ratio_max must satisfy 0 < min <= max <= 1",
                "e.g. 0.01 and 0.5");
  if (!(c.hold_share >= 0 && c.hold_share <= 1))
    throw Error("option " + n + ".hold_share must be in [0, 1] (0 = the port's rule alone)",
                "pass e.g. " + n + ".hold_share=0.1");
}

void check_shares(const std::string& n, const HybridGenConfig& c) {
  if (!(c.min_host_share >= 0 && c.min_host_share < 1))
    throw Error("option " + n + ".min_host_share must be in [0, 1)",
                "pass e.g. " + n + ".min_host_share=0.5");
  if (!(c.hot_share >= 0 && c.hot_share < 1) || !(c.fast_v_share >= 0 && c.fast_v_share <= 1) ||
      !(c.score_alpha > 0 && c.score_alpha <= 1) || !(c.ext_share > 0 && c.ext_share < 1))
    throw Error(
        "options " + n +
            ".hot_share [0,1), fast_v_share [0,1], score_alpha (0,1], ext_share (0,1) out of range",
        "see hybrid/README.md for each option's range");
}

}  // namespace

HybridGenConfig HybridGenConfig::budget_config() const {
  if (budget == BudgetPolicy::own) return *this;
  HybridGenConfig b = *this;
  b.merge = MergeMode::logit;
  b.kv_mapping = KvMappingPolicy::semantic;
  // A static ratio of 1 is the exact logit mode, which sizes its buffers for every host token.
  if (b.ratio < 1.0 || b.scheduler.adaptive) {
    b.scheduler.adaptive = true;
    b.scheduler.adapt_boundary = true;
  }
  return b;
}

KvMappingOptions HybridGenConfig::kv_mapping_options() const {
  KvMappingOptions m;
  m.policy = kv_mapping;
  m.naive_tier = naive_tier;
  m.migrate_every = migrate_every;
  m.fast_v_share = fast_v_share;
  m.score_alpha = score_alpha;
  m.scan_newest_only = scheduler.cpu_k_cap > 0;
  return m;
}

HybridGenConfig HybridGenConfig::from_options(const StrategyOptions& o, const std::string& n,
                                              const HybridGenConfig& d) {
  HybridGenConfig c = d;
  c.merge = choice(o, n, "merge", d.merge, kMergeModes);
  c.ratio = o.number(n, "ratio", d.ratio);
  if (!(c.ratio > 0 && c.ratio <= 1))
    throw Error("option " + n + ".ratio must be in (0, 1]",
                "pass e.g. --opt " + n + ".ratio=0.05 (1 = exact)");
  read_scheduler(o, n, d.scheduler, c.scheduler);
  c.gpu_tokens = o.count(n, "gpu_tokens", d.gpu_tokens, -1, kMaxOptionTokens);  // -1: all fit
  c.min_gpu_tokens = o.count(n, "min_gpu_tokens", d.min_gpu_tokens, 0, kMaxOptionTokens);
  c.min_host_share = o.number(n, "min_host_share", d.min_host_share);
  c.kv_mapping = read_kv_mapping(o, n, d.kv_mapping);
  c.naive_tier = static_cast<int>(o.count(n, "naive_tier", d.naive_tier, 0, kMaxTiers));
  c.migrate_every = static_cast<int>(o.count(n, "migrate_every", d.migrate_every, 0, kMaxSteps));
  c.hot_share = o.number(n, "hot_share", d.hot_share);
  c.fast_v_share = o.number(n, "fast_v_share", d.fast_v_share);
  c.score_alpha = o.number(n, "score_alpha", d.score_alpha);
  c.ext_share = o.number(n, "ext_share", d.ext_share);
  check_shares(n, c);
  c.budget = choice(o, n, "budget", d.budget, kBudgetPolicies);
  c.overlap = flag(o, n, "overlap", d.overlap);
  c.report_attended = flag(o, n, "attended", d.report_attended);
  c.cpu_select = choice(o, n, "cpu_select", d.cpu_select, kCpuSelects);
  c.select_hint = flag(o, n, "select_hint", d.select_hint);
  c.hint_margin = o.number(n, "hint_margin", d.hint_margin);
  if (!(c.hint_margin >= 0))
    throw Error("option " + n + ".hint_margin must be >= 0",
                "pass e.g. --opt " + n + ".hint_margin=0.1 (or " + n + ".select_hint=0)");
  c.ship_rows = choice(o, n, "ship_rows", d.ship_rows, kShipRows);
  return c;
}

}  // namespace hb::hybrid
