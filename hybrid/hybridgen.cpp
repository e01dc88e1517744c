#include "hybrid/hybridgen.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "core/error.h"
#include "core/phase_names.h"
#include "core/timer.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/select.h"
#include "kernels/cpu/topk_select.h"

namespace hb::hybrid {

// ---------------------------------------------------------------------------------------------
// Options

namespace {

bool parse_bool(const std::string& full, const std::string& v) {
  if (v == "1" || v == "on" || v == "true" || v == "yes") return true;
  if (v == "0" || v == "off" || v == "false" || v == "no") return false;
  throw Error("option " + full + "=" + v + " is not on/off",
              "pass " + full + "=1 or " + full + "=0");
}

std::string choice(const StrategyOptions& o, const std::string& name, const std::string& key,
                   const std::string& def, std::initializer_list<const char*> allowed) {
  const std::string v = o.text(name, key, def);
  std::string list;
  for (const char* a : allowed) {
    if (v == a) return v;
    list += (list.empty() ? "" : ", ") + std::string(a);
  }
  throw Error("option " + name + "." + key + "=" + v + " is not one of " + list,
              "pass --opt " + name + "." + key + "=<" + list + ">");
}

}  // namespace

HybridGenConfig HybridGenConfig::from_options(const StrategyOptions& o, const std::string& n,
                                              const HybridGenConfig& d) {
  HybridGenConfig c = d;
  c.merge = choice(o, n, "merge", d.merge, {"logit", "lse"});
  c.ratio = o.number(n, "ratio", d.ratio);
  if (!(c.ratio > 0 && c.ratio <= 1))
    throw Error("option " + n + ".ratio must be in (0, 1]",
                "pass e.g. --opt " + n + ".ratio=0.05 (1 = exact)");
  const std::string sched = choice(o, n, "scheduler", d.scheduler.adaptive ? "feedback" : "static",
                                   {"feedback", "static"});
  c.scheduler.adaptive = sched == "feedback";
  const std::string boundary = choice(
      o, n, "boundary", d.scheduler.adapt_boundary ? "adaptive" : "fixed", {"adaptive", "fixed"});
  c.scheduler.adapt_boundary = boundary == "adaptive";
  c.scheduler.adapt_ratio =
      parse_bool(n + ".adapt_ratio", o.text(n, "adapt_ratio", d.scheduler.adapt_ratio ? "1" : "0"));
  c.scheduler.interval = static_cast<int>(o.number(n, "interval", d.scheduler.interval));
  c.scheduler.ratio_min = o.number(n, "ratio_min", d.scheduler.ratio_min);
  c.scheduler.ratio_max = o.number(n, "ratio_max", d.scheduler.ratio_max);
  c.scheduler.ratio_up = o.number(n, "ratio_up", d.scheduler.ratio_up);
  c.scheduler.ratio_down = o.number(n, "ratio_down", d.scheduler.ratio_down);
  c.scheduler.boundary_gain = o.number(n, "boundary_gain", d.scheduler.boundary_gain);
  c.scheduler.dead_band = o.number(n, "dead_band", d.scheduler.dead_band);
  c.scheduler.cost_weight = o.number(n, "cost_weight", d.scheduler.cost_weight);
  if (c.scheduler.interval < 1)
    throw Error("option " + n + ".interval must be >= 1", "pass e.g. " + n + ".interval=4");
  if (!(c.scheduler.ratio_min > 0 && c.scheduler.ratio_min <= c.scheduler.ratio_max &&
        c.scheduler.ratio_max <= 1))
    throw Error("options " + n + ".ratio_min/ratio_max must satisfy 0 < min <= max <= 1",
                "e.g. 0.01 and 0.5");
  c.gpu_tokens = static_cast<int64_t>(o.number(n, "gpu_tokens", static_cast<double>(d.gpu_tokens)));
  c.min_gpu_tokens =
      static_cast<int64_t>(o.number(n, "min_gpu_tokens", static_cast<double>(d.min_gpu_tokens)));
  c.min_host_share = o.number(n, "min_host_share", d.min_host_share);
  if (!(c.min_host_share >= 0 && c.min_host_share < 1))
    throw Error("option " + n + ".min_host_share must be in [0, 1)",
                "pass e.g. " + n + ".min_host_share=0.5");
  c.mapping = choice(o, n, "mapping", d.mapping, {"semantic", "naive", "interleave"});
  c.naive_tier = static_cast<int>(o.number(n, "naive_tier", d.naive_tier));
  c.migrate_every = static_cast<int>(o.number(n, "migrate_every", d.migrate_every));
  c.hot_share = o.number(n, "hot_share", d.hot_share);
  c.fast_v_share = o.number(n, "fast_v_share", d.fast_v_share);
  c.score_alpha = o.number(n, "score_alpha", d.score_alpha);
  c.ext_share = o.number(n, "ext_share", d.ext_share);
  if (!(c.hot_share >= 0 && c.hot_share < 1) || !(c.fast_v_share >= 0 && c.fast_v_share <= 1) ||
      !(c.score_alpha > 0 && c.score_alpha <= 1) || !(c.ext_share > 0 && c.ext_share < 1))
    throw Error(
        "options " + n +
            ".hot_share [0,1), fast_v_share [0,1], score_alpha (0,1], ext_share (0,1) out of range",
        "see hybrid/README.md for each option's range");
  c.overlap = parse_bool(n + ".overlap", o.text(n, "overlap", d.overlap ? "1" : "0"));
  c.report_attended =
      parse_bool(n + ".attended", o.text(n, "attended", d.report_attended ? "1" : "0"));
  return c;
}

// ---------------------------------------------------------------------------------------------
// State

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

struct PageInfo {
  PageHome home = PageHome::window;
  int8_t k_tier = -1, v_tier = -1;  // host tier indices while the page is on the host
  float score = 0;                  // EMA of top-k hits per step (frozen while promoted)
  int32_t hits = 0;                 // hits of the current step
};

struct HeadState {
  std::vector<PageInfo> pages;
  std::vector<PageRef> cpu_refs, acc_refs;  // the two views' page tables
  std::vector<int32_t> cpu_ids, acc_ids;    // page index of each view page
  int64_t hot = 0;                          // pages promoted to the accelerator
  int64_t k_fast = 0, v_fast = 0;           // host pages with K / V on the fast tier
  int64_t last_k = 0;                       // rows shipped per query head at the last step
  std::vector<int64_t> cpu_k_pages_by_tier, cpu_v_pages_by_tier;
};

struct SeqState {
  std::unique_ptr<PagedKvCache> cache;
  std::vector<HeadState> heads;
  std::vector<KvHeadView> cpu_view, acc_view;
};

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

struct HybridGen::Impl {
  HybridGen& self;
  explicit Impl(HybridGen& s) : self(s) {}
  const HybridGenConfig& cfg() const { return self.cfg_; }

  const Problem* problem = nullptr;
  Platform platform;
  AttentionShape shape;
  int B = 1, P = 16, Hq = 0, Hkv = 0, d = 0, G = 1;
  size_t es = 2, block = 0;
  int64_t t_end = 0, pages_end = 0;
  bool logit = true, all_fit = false, semantic = true;
  int fast = 0, far = -1;  // host tier indices; far -1: no CXL/far tier
  int naive_tier = 0;
  int64_t fast_k_cap = INT64_MAX;  // per head: host pages whose K fits the fast tier
  int64_t fast_v_cap = 0;          // per head: V pages promotable to the fast tier (semantic)
  int64_t k_cap = 0;               // shipped rows per query head the buffers hold
  int64_t ccap = 0;                // logits scratch stride (max CPU tokens per head)
  int64_t first_window = 0;        // first page of the recent window (all heads, sequences)
  int64_t min_window_pages = 1;
  double ratio_limit = 1.0;  // ratio the shipped-row buffers allow at the longest context
  std::string ext_note;

  std::unique_ptr<PageArena> acc_arena;
  std::vector<std::unique_ptr<PageArena>> k_arenas, v_arenas;  // per host tier, created on use
  std::vector<SeqState> seqs;
  std::unique_ptr<StepIO> io;
  Buffer o_loc, lse_loc, o_x, lse_x, ext_logits_dev, ext_v_dev;  // accelerator memory
  Buffer ext_logits_host, ext_v_host, o_cpu_host, lse_cpu_host;  // staging (pinned on CUDA)
  std::vector<float> logits, topv;
  std::vector<int32_t> topi;
  std::vector<int64_t> krow;  // rows shipped per (b, q head) this step
  bool dirty = true;
  Traffic mig;  // migration traffic of the current step
  int64_t migrated_pages_step = 0;

  PageArena& k_arena(int t) {
    if (!k_arenas[t])
      k_arenas[t] = std::make_unique<PageArena>(platform.host_tiers[t].allocator, block, 64);
    return *k_arenas[t];
  }
  PageArena& v_arena(int t) {
    if (!v_arenas[t])
      v_arenas[t] = std::make_unique<PageArena>(platform.host_tiers[t].allocator, block, 64);
    return *v_arenas[t];
  }
  MemoryKind tier_kind(int t) const { return platform.host_tiers[t].location.kind; }

  // Host tiers for a page that arrives on the host (FIFO demotion, load, boundary move).
  std::pair<int, int> host_tiers_for(const HeadState& hs, int64_t page) const {
    const std::string& m = cfg().mapping;
    if (m == "naive") return {naive_tier, naive_tier};
    if (m == "interleave") {
      const int t = static_cast<int>(page % static_cast<int64_t>(platform.host_tiers.size()));
      return {t, t};
    }
    // semantic: K (scanned every step) on the fast tier while it has room, V (read only at
    // the top-k rows) on the far tier when there is one.
    const int kt = (far >= 0 && hs.k_fast >= fast_k_cap) ? far : fast;
    return {kt, far >= 0 ? far : fast};
  }

  void note_host_move(HeadState& hs, PageInfo& pi, int kt, int vt, int sign) {
    if (kt == fast) hs.k_fast += sign;
    if (vt == fast) hs.v_fast += sign;
    (void)pi;
  }

  // Page i of head h of sequence s goes to the host tiers (kt, vt).
  void to_host(SeqState& s, int h, int64_t i, int kt, int vt) {
    HeadState& hs = s.heads[h];
    PageInfo& pi = hs.pages[i];
    const bool from_acc = pi.home != PageHome::host;
    if (!from_acc) note_host_move(hs, pi, pi.k_tier, pi.v_tier, -1);
    const int old_k = pi.k_tier, old_v = pi.v_tier;
    const size_t moved = s.cache->migrate_page(h, i, &k_arena(kt), &v_arena(vt));
    if (from_acc) {
      // The copy engine reads accelerator memory and writes the host tiers.
      mig.d2h_bytes += static_cast<int64_t>(moved);
      mig.read(Processor::accelerator, MemoryKind::accelerator, static_cast<int64_t>(moved));
      mig.write(Processor::accelerator, tier_kind(kt), static_cast<int64_t>(block));
      mig.write(Processor::accelerator, tier_kind(vt), static_cast<int64_t>(block));
      if (pi.home == PageHome::hot) hs.hot--;
    } else {
      if (old_k != kt) {
        mig.read(Processor::cpu, tier_kind(old_k), static_cast<int64_t>(block));
        mig.write(Processor::cpu, tier_kind(kt), static_cast<int64_t>(block));
      }
      if (old_v != vt) {
        mig.read(Processor::cpu, tier_kind(old_v), static_cast<int64_t>(block));
        mig.write(Processor::cpu, tier_kind(vt), static_cast<int64_t>(block));
      }
    }
    if (moved) ++migrated_pages_step;
    pi.home = PageHome::host;
    pi.k_tier = static_cast<int8_t>(kt);
    pi.v_tier = static_cast<int8_t>(vt);
    note_host_move(hs, pi, kt, vt, +1);
    dirty = true;
  }

  void to_acc(SeqState& s, int h, int64_t i, PageHome home) {
    HeadState& hs = s.heads[h];
    PageInfo& pi = hs.pages[i];
    if (pi.home == PageHome::host) {
      note_host_move(hs, pi, pi.k_tier, pi.v_tier, -1);
      const size_t moved = s.cache->migrate_page(h, i, acc_arena.get(), acc_arena.get());
      // The copy engine reads the host tiers (baselines/README's convention).
      mig.h2d_bytes += static_cast<int64_t>(moved);
      mig.read(Processor::accelerator, tier_kind(pi.k_tier), static_cast<int64_t>(block));
      mig.read(Processor::accelerator, tier_kind(pi.v_tier), static_cast<int64_t>(block));
      mig.write(Processor::accelerator, MemoryKind::accelerator, static_cast<int64_t>(moved));
      ++migrated_pages_step;
    } else if (pi.home == PageHome::hot) {
      hs.hot--;
    }
    pi.home = home;
    pi.k_tier = pi.v_tier = -1;
    if (home == PageHome::hot) hs.hot++;
    dirty = true;
  }

  // Moves the recent window's first page so the window holds `window_pages` pages once the
  // caches have `pages_after` pages (FIFO eviction, and the scheduler's boundary moves).
  void apply_window(int64_t pages_after, int64_t window_pages) {
    const int64_t target = std::max<int64_t>(0, pages_after - window_pages);
    while (first_window < target) {
      for (auto& s : seqs)
        for (int h = 0; h < Hkv; ++h) {
          const auto [kt, vt] = host_tiers_for(s.heads[h], first_window);
          to_host(s, h, first_window, kt, vt);
        }
      ++first_window;
    }
    while (first_window > target) {
      --first_window;
      for (auto& s : seqs)
        for (int h = 0; h < Hkv; ++h) to_acc(s, h, first_window, PageHome::window);
    }
  }

  void rebuild_views() {
    const size_t n_tiers = platform.host_tiers.size();
    for (auto& s : seqs) {
      for (int h = 0; h < Hkv; ++h) {
        HeadState& hs = s.heads[h];
        hs.cpu_refs.clear();
        hs.cpu_ids.clear();
        hs.acc_refs.clear();
        hs.acc_ids.clear();
        hs.cpu_k_pages_by_tier.assign(n_tiers, 0);
        hs.cpu_v_pages_by_tier.assign(n_tiers, 0);
        const int64_t n = s.cache->num_pages(h);
        for (int64_t i = 0; i < n; ++i) {
          const PageInfo& pi = hs.pages[i];
          if (pi.home == PageHome::host) {
            hs.cpu_refs.push_back(s.cache->page(h, i));
            hs.cpu_ids.push_back(static_cast<int32_t>(i));
            hs.cpu_k_pages_by_tier[pi.k_tier]++;
            hs.cpu_v_pages_by_tier[pi.v_tier]++;
          } else if (pi.home == PageHome::hot) {
            hs.acc_refs.push_back(s.cache->page(h, i));
            hs.acc_ids.push_back(static_cast<int32_t>(i));
          }
        }
        // Window pages last: only a view's last page may be partial.
        for (int64_t i = 0; i < n; ++i)
          if (hs.pages[i].home == PageHome::window) {
            hs.acc_refs.push_back(s.cache->page(h, i));
            hs.acc_ids.push_back(static_cast<int32_t>(i));
          }
        s.cpu_view[h] =
            KvHeadView{hs.cpu_refs.data(), static_cast<int64_t>(hs.cpu_refs.size()) * P};
        s.acc_view[h] = KvHeadView{hs.acc_refs.data(), 0};
      }
    }
    dirty = false;
    refresh_counts();
  }

  // The accelerator views' token counts (the last page fills as tokens are appended).
  void refresh_counts() {
    for (auto& s : seqs)
      for (int h = 0; h < Hkv; ++h) {
        const int64_t n = s.cache->num_tokens(h);
        const int64_t last = n - (s.cache->num_pages(h) - 1) * P;
        s.acc_view[h].num_tokens =
            (static_cast<int64_t>(s.heads[h].acc_refs.size()) - 1) * P + last;
      }
  }

  PagedKvView cpu_view(int b) const {
    return PagedKvView{Hkv, d, P, shape.kv_dtype, seqs[b].cpu_view.data()};
  }
  PagedKvView acc_view(int b) const {
    return PagedKvView{Hkv, d, P, shape.kv_dtype, seqs[b].acc_view.data()};
  }

  // Semantic mapping pass: promote pages the top-k keeps selecting, demote cold ones.
  void migrate_pass() {
    for (auto& s : seqs) {
      for (int h = 0; h < Hkv; ++h) {
        HeadState& hs = s.heads[h];
        std::vector<int64_t> host;
        for (int64_t i = 0; i < first_window; ++i)
          if (hs.pages[i].home == PageHome::host) host.push_back(i);
        if (host.empty()) continue;
        // A page's expected hits per step if the top-k picked uniformly.
        // (k of the C = pages * P tokens per query head, G query heads per KV head.)
        const double uniform = static_cast<double>(G) * static_cast<double>(hs.last_k) /
                               static_cast<double>(host.size());
        const double hot_at = std::max(2.0 * uniform, 1e-6), cold_below = uniform;
        std::sort(host.begin(), host.end(), [&](int64_t a, int64_t b) {
          return hs.pages[a].score != hs.pages[b].score ? hs.pages[a].score > hs.pages[b].score
                                                        : a < b;
        });
        // Whole pages to the accelerator's hot slots (hysteresis 1.5x against the coldest).
        std::vector<int64_t> promoted;
        if (self.hot_slots_ > 0) {
          for (int64_t c : host) {
            if (hs.pages[c].score < hot_at) break;
            if (hs.hot < self.hot_slots_) {
              to_acc(s, h, c, PageHome::hot);
              promoted.push_back(c);
              continue;
            }
            int64_t coldest = -1;
            for (int64_t i = 0; i < first_window; ++i)
              if (hs.pages[i].home == PageHome::hot &&
                  (coldest < 0 || hs.pages[i].score < hs.pages[coldest].score))
                coldest = i;
            if (coldest < 0 || hs.pages[c].score <= 1.5 * hs.pages[coldest].score) break;
            const auto [kt, vt] = host_tiers_for(hs, coldest);
            to_host(s, h, coldest, kt, vt);
            to_acc(s, h, c, PageHome::hot);
            promoted.push_back(c);
          }
        }
        // V between host tiers: the hottest host pages' V on the fast tier.
        if (far >= 0 && fast_v_cap > 0) {
          int64_t want = 0;
          for (int64_t c : host) {
            PageInfo& pi = hs.pages[c];
            if (pi.home != PageHome::host) continue;  // just promoted
            const bool hot = pi.score >= hot_at && want < fast_v_cap;
            if (hot) ++want;
            if (hot && pi.v_tier != fast && hs.v_fast < fast_v_cap) {
              to_host(s, h, c, pi.k_tier, fast);
            } else if (!hot && pi.v_tier == fast && pi.score < cold_below) {
              to_host(s, h, c, pi.k_tier, far);
            }
          }
        }
      }
    }
  }
};

// ---------------------------------------------------------------------------------------------

HybridGen::HybridGen(std::string name, HybridGenConfig cfg)
    : name_(std::move(name)), cfg_(std::move(cfg)) {}
HybridGen::~HybridGen() = default;

PlanResult HybridGen::plan(const Problem& problem, const Platform& platform) {
  impl_ = std::make_unique<Impl>(*this);
  Impl& m = *impl_;
  m.problem = &problem;
  m.platform = platform;
  m.shape = problem.shape;
  m.B = problem.batch;
  m.P = problem.page_tokens;
  m.Hq = m.shape.q_heads;
  m.Hkv = m.shape.kv_heads;
  m.d = m.shape.head_dim;
  m.G = m.shape.group_size();
  m.es = dtype_size(m.shape.kv_dtype);
  m.block = static_cast<size_t>(m.P) * m.d * m.es;
  m.t_end = problem.prompt_len() + problem.decode_steps();
  m.pages_end = ceil_div(m.t_end, m.P);
  m.logit = cfg_.merge == "logit";
  m.semantic = cfg_.mapping == "semantic";

  PlanResult r;
  auto& par = r.parameters;
  if (platform.host_tiers.empty()) {
    r.status = PlanStatus::unsupported;
    r.reason = "no host memory tier to hold the older tokens' KV";
    return r;
  }
  // Host tiers: fastest first (memtier's order); the far tier is the first CXL or far one.
  for (size_t t = 1; t < platform.host_tiers.size(); ++t) {
    const MemoryKind k = platform.host_tiers[t].location.kind;
    if (k == MemoryKind::cxl || k == MemoryKind::far) {
      m.far = static_cast<int>(t);
      break;
    }
  }
  m.naive_tier = cfg_.naive_tier;
  if (m.naive_tier < 0 || m.naive_tier >= static_cast<int>(platform.host_tiers.size())) {
    r.status = PlanStatus::unsupported;
    r.reason = "naive_tier " + std::to_string(m.naive_tier) + " does not exist (" +
               std::to_string(platform.host_tiers.size()) + " host tiers)";
    return r;
  }
  m.k_arenas.resize(platform.host_tiers.size());
  m.v_arenas.resize(platform.host_tiers.size());

  // Accelerator budget: what is left after the step buffers (q, k, v, o, lse and two partials).
  Accelerator& acc = *platform.accelerator;
  const int64_t cap = acc.info().capacity_bytes - acc.bytes_in_use();
  const int64_t fixed =
      static_cast<int64_t>(m.B) * (2LL * m.Hq * m.d + 2LL * m.Hkv * m.d + m.Hq) * 4 +
      2LL * m.B * m.Hq * (m.d + 1) * 4;
  const int64_t avail = cap - fixed;
  const int64_t page_slot =
      2LL * static_cast<int64_t>(m.block) * m.Hkv * m.B;           // one page index, K+V, all heads
  const int64_t row_bytes = 4 + static_cast<int64_t>(m.d * m.es);  // one shipped logit + V row
  const bool exact = cfg_.ratio >= 1.0 && !cfg_.scheduler.adaptive;
  const bool adapt_boundary = cfg_.scheduler.adaptive && cfg_.scheduler.adapt_boundary;

  m.all_fit = cfg_.min_host_share == 0 && cfg_.gpu_tokens < 0 && avail >= m.pages_end * page_slot;
  int64_t ext_bytes = 0;
  if (m.all_fit) {
    acc_pages_ = m.pages_end;
    hot_slots_ = 0;
    window_pages_ = m.pages_end;
    m.min_window_pages = 1;
  } else {
    // Shipped rows: k_cap rows per query head and sequence, sized for the largest ratio the
    // scheduler may reach at the longest context, within ext_share of the budget (exact mode
    // takes what it needs).
    const double rmax =
        cfg_.scheduler.adaptive ? std::max(cfg_.ratio, cfg_.scheduler.ratio_max) : cfg_.ratio;
    // Page layout for a given accelerator page count: hot slots, window, smallest window.
    struct Layout {
      int64_t hot, w, wmin;
    };
    auto layout = [&](int64_t acc_pages) {
      Layout l;
      l.hot =
          m.semantic ? static_cast<int64_t>(cfg_.hot_share * static_cast<double>(acc_pages)) : 0;
      l.w = std::max<int64_t>(1, acc_pages - l.hot);
      if (cfg_.gpu_tokens >= 0) l.w = std::clamp<int64_t>(ceil_div(cfg_.gpu_tokens, m.P), 1, l.w);
      if (cfg_.min_host_share > 0)
        l.w = std::min(l.w, std::max<int64_t>(1, static_cast<int64_t>((1.0 - cfg_.min_host_share) *
                                                                      m.pages_end)));
      l.wmin =
          adapt_boundary ? std::clamp<int64_t>(ceil_div(cfg_.min_gpu_tokens, m.P), 1, l.w) : l.w;
      return l;
    };
    // The most CPU tokens a head can have: everything but the smallest window (whose last page
    // may hold a single token).
    auto c_max_of = [&](const Layout& l) {
      return std::max<int64_t>(0, m.t_end - (l.wmin - 1) * m.P);
    };
    auto ext_of = [&](const Layout& l) {
      const int64_t k_need =
          m.logit ? static_cast<int64_t>(std::ceil(rmax * static_cast<double>(c_max_of(l)))) : 0;
      const int64_t need = static_cast<int64_t>(m.B) * m.Hq * k_need * row_bytes;
      const int64_t share = static_cast<int64_t>(cfg_.ext_share * static_cast<double>(avail));
      return std::pair<int64_t, int64_t>{k_need, exact ? need : std::min(need, share)};
    };
    // Fixed point: fewer accelerator pages -> more CPU tokens -> more shipped rows (monotone).
    int64_t acc_pages = std::max<int64_t>(0, avail / page_slot);
    for (int iter = 0; iter < 256 && acc_pages > 0; ++iter) {
      const int64_t next =
          std::max<int64_t>(0, (avail - ext_of(layout(acc_pages)).second) / page_slot);
      if (next == acc_pages) break;
      acc_pages = next;
    }
    const Layout l = layout(acc_pages);
    const auto [k_need, ext] = ext_of(l);
    ext_bytes = ext;
    m.k_cap =
        m.logit ? std::min(k_need, ext_bytes / (static_cast<int64_t>(m.B) * m.Hq * row_bytes)) : 0;
    m.ccap = c_max_of(l);
    acc_pages_ = acc_pages;
    hot_slots_ = l.hot;
    window_pages_ = l.w;
    m.min_window_pages = l.wmin;
    if (acc_pages_ * page_slot + ext_bytes > avail) acc_pages_ = 0;  // did not converge
    if (acc_pages_ < window_pages_ + hot_slots_ || acc_pages_ < 1) {
      r.status = PlanStatus::oom;
      r.reason = "the accelerator budget (" + std::to_string(cap >> 20) +
                 " MiB free) cannot hold one page per KV head" +
                 (m.logit && ext_bytes > 0
                      ? " next to " + std::to_string(ext_bytes >> 20) + " MiB for shipped rows"
                      : "");
      return r;
    }
    m.ratio_limit = m.ccap > 0 ? static_cast<double>(m.k_cap) / static_cast<double>(m.ccap) : 1.0;
    if (m.logit && m.k_cap < static_cast<int64_t>(std::ceil(rmax * static_cast<double>(m.ccap))))
      m.ext_note = "shipped-row buffers hold " + std::to_string(m.k_cap) +
                   " rows per query head (ratio " + std::to_string(m.ratio_limit) +
                   " at the longest context; raise ext_share or the budget)";
  }
  const int64_t hot_slots = hot_slots_;

  // Host capacity (when memtier knows the free bytes): K that does not fit the fast tier
  // spills to the far tier (oldest first, as pages arrive).
  const int64_t host_pages_max = std::max<int64_t>(0, m.pages_end - m.min_window_pages);
  const int64_t head_page_bytes =
      static_cast<int64_t>(m.block) * m.Hkv * m.B;  // one block per head and seq
  if (m.semantic) {
    const int64_t free_fast = platform.host_tiers[m.fast].free_bytes;
    if (free_fast >= 0 && m.far >= 0) m.fast_k_cap = free_fast / head_page_bytes;
    m.fast_v_cap =
        m.far >= 0 ? static_cast<int64_t>(cfg_.fast_v_share * static_cast<double>(host_pages_max))
                   : 0;
  }
  auto tier_need_ok = [&](int t, int64_t bytes) {
    const int64_t f = platform.host_tiers[t].free_bytes;
    return f < 0 || bytes <= f;
  };
  {
    const int64_t host_bytes = 2 * host_pages_max * head_page_bytes;
    bool ok = true;
    std::string where;
    if (cfg_.mapping == "naive") {
      ok = tier_need_ok(m.naive_tier, host_bytes);
      where = platform.host_tiers[m.naive_tier].location.to_string();
    } else if (m.semantic && m.far < 0) {
      ok = tier_need_ok(m.fast, host_bytes);
      where = platform.host_tiers[m.fast].location.to_string();
    } else if (m.semantic) {
      ok = tier_need_ok(m.far,
                        host_pages_max * head_page_bytes +
                            std::max<int64_t>(0, host_pages_max - m.fast_k_cap) * head_page_bytes);
      where = platform.host_tiers[m.far].location.to_string();
    }
    if (!ok) {
      r.status = PlanStatus::oom;
      r.reason =
          "host KV needs " + std::to_string(host_bytes >> 20) + " MiB; " + where + " has less free";
      return r;
    }
  }

  sched_ = std::make_unique<FeedbackScheduler>(cfg_.scheduler, cfg_.ratio, window_pages_ * m.P);
  sched_->set_window_limits(m.min_window_pages * m.P,
                            std::max<int64_t>(1, acc_pages_ - hot_slots) * m.P);
  if (m.all_fit) sched_->set_window_limits(window_pages_ * m.P, window_pages_ * m.P);

  par["merge"] = cfg_.merge;
  par["ratio"] = std::to_string(cfg_.ratio);
  par["topk_rounding"] = "k = min(C, ceil(ratio * C)) per query head, C = that head's CPU tokens";
  par["scheduler"] = cfg_.scheduler.adaptive ? "feedback" : "static";
  par["scheduler.interval"] = std::to_string(cfg_.scheduler.interval);
  par["scheduler.ratio_range"] =
      std::to_string(cfg_.scheduler.ratio_min) + ".." + std::to_string(cfg_.scheduler.ratio_max);
  par["boundary"] = adapt_boundary ? "adaptive (ours: toward the equalising split)" : "fixed";
  par["accelerator_pages_per_head"] = std::to_string(acc_pages_);
  par["gpu_window_tokens"] = std::to_string(window_pages_ * m.P);
  par["min_gpu_window_tokens"] = std::to_string(m.min_window_pages * m.P);
  par["hot_pages_per_head"] = std::to_string(hot_slots);
  par["all_kv_on_accelerator"] = m.all_fit ? "yes (KV fits; CPU side idle)" : "no";
  par["shipped_rows_per_head"] = std::to_string(m.k_cap);
  par["shipped_row_bytes"] = std::to_string(ext_bytes);
  if (!m.ext_note.empty()) par["shipped_rows_note"] = m.ext_note;
  par["mapping"] = cfg_.mapping;
  if (m.semantic) {
    par["k_tier"] = platform.host_tiers[m.fast].location.to_string();
    par["v_tier"] = m.far >= 0 ? platform.host_tiers[m.far].location.to_string()
                               : platform.host_tiers[m.fast].location.to_string() +
                                     " (no CXL/far tier: same as K)";
    par["migrate_every"] = std::to_string(cfg_.migrate_every);
    par["fast_v_pages_per_head"] = std::to_string(m.fast_v_cap);
    if (m.fast_k_cap != INT64_MAX) par["fast_k_pages_per_head"] = std::to_string(m.fast_k_cap);
  } else if (cfg_.mapping == "naive") {
    par["kv_tier"] = platform.host_tiers[m.naive_tier].location.to_string();
  } else {
    std::string t;
    for (const auto& h : platform.host_tiers) t += (t.empty() ? "" : ",") + h.location.to_string();
    par["kv_tiers"] = t + " (pages round-robin)";
  }
  par["overlap"] = cfg_.overlap ? "on" : "off (ablation: CPU side then accelerator side)";
  par["host_threads"] = std::to_string(platform.host_pool ? platform.host_pool->size() : 0);
  return r;
}

void HybridGen::load() {
  Impl& m = *impl_;
  Accelerator& acc = *m.platform.accelerator;
  const Problem& pr = *m.problem;
  m.io = std::make_unique<StepIO>(pr, acc);
  auto mem = acc.memory();
  const size_t qn = static_cast<size_t>(m.B) * m.Hq;
  m.o_loc = mem->allocate(qn * m.d * 4);
  m.lse_loc = mem->allocate(qn * 4);
  m.o_x = mem->allocate(qn * m.d * 4);
  m.lse_x = mem->allocate(qn * 4);
  auto staging = acc.staging_memory(m.platform.cpu_node);
  if (!m.all_fit) {
    if (m.logit && m.k_cap > 0) {
      m.ext_logits_dev = mem->allocate(qn * m.k_cap * 4);
      m.ext_v_dev = mem->allocate(qn * m.k_cap * m.d * m.es);
      m.ext_logits_host = staging->allocate(qn * m.k_cap * 4);
      m.ext_v_host = staging->allocate(qn * m.k_cap * m.d * m.es);
      m.topi.resize(qn * m.k_cap);
      m.topv.resize(qn * m.k_cap);
    }
    if (m.logit) m.logits.resize(qn * m.ccap);
    m.o_cpu_host = staging->allocate(qn * m.d * 4);
    m.lse_cpu_host = staging->allocate(qn * 4);
  }
  m.krow.assign(qn, 0);

  const size_t blocks_per_page_index = static_cast<size_t>(m.Hkv) * m.B;
  m.acc_arena = std::make_unique<PageArena>(mem, m.block, 64);
  m.acc_arena->reserve(static_cast<size_t>(acc_pages_) * 2 * blocks_per_page_index);
  if (!m.all_fit) {
    const size_t host_pages =
        static_cast<size_t>(std::max<int64_t>(0, m.pages_end - m.min_window_pages));
    const size_t blocks = host_pages * blocks_per_page_index;
    if (cfg_.mapping == "naive") {
      m.k_arena(m.naive_tier).reserve(blocks);
      m.v_arena(m.naive_tier).reserve(blocks);
    } else if (cfg_.mapping == "interleave") {
      const size_t n = m.platform.host_tiers.size();
      for (size_t t = 0; t < n; ++t) {
        m.k_arena(static_cast<int>(t)).reserve((host_pages + n - 1) / n * blocks_per_page_index);
        m.v_arena(static_cast<int>(t)).reserve((host_pages + n - 1) / n * blocks_per_page_index);
      }
    } else {
      const size_t k_fast =
          static_cast<size_t>(std::min<int64_t>(static_cast<int64_t>(host_pages), m.fast_k_cap));
      m.k_arena(m.fast).reserve(k_fast * blocks_per_page_index);
      if (m.far >= 0) {
        m.v_arena(m.far).reserve(blocks);
        if (k_fast < host_pages)
          m.k_arena(m.far).reserve((host_pages - k_fast) * blocks_per_page_index);
        if (m.fast_v_cap > 0)
          m.v_arena(m.fast).reserve(static_cast<size_t>(m.fast_v_cap) * blocks_per_page_index);
      } else {
        m.v_arena(m.fast).reserve(blocks);
      }
    }
  }

  // Prompt: the oldest pages straight into their host tiers, the recent window into the
  // accelerator (page by page, since a page's tiers may differ).
  const int64_t prompt = pr.prompt_len();
  const int64_t n_pages = ceil_div(prompt, m.P);
  m.first_window = std::max<int64_t>(0, n_pages - window_pages_);
  m.seqs.clear();
  m.seqs.resize(m.B);
  for (int b = 0; b < m.B; ++b) {
    SeqState& s = m.seqs[b];
    s.cache = std::make_unique<PagedKvCache>(m.shape, m.P);
    s.heads.resize(m.Hkv);
    s.cpu_view.resize(m.Hkv);
    s.acc_view.resize(m.Hkv);
    const DenseKv& src = pr.workloads[b].prompt;
    for (int64_t i = 0; i < n_pages; ++i) {
      const int64_t t0 = i * m.P, t1 = std::min(prompt, t0 + m.P);
      if (i < m.first_window) {
        // All heads share the page's tiers at load (counts are per head, identical).
        const auto [kt, vt] = m.host_tiers_for(s.heads[0], i);
        s.cache->append(src, t0, t1, m.k_arena(kt), m.v_arena(vt));
        for (int h = 0; h < m.Hkv; ++h) {
          PageInfo pi;
          pi.home = PageHome::host;
          pi.k_tier = static_cast<int8_t>(kt);
          pi.v_tier = static_cast<int8_t>(vt);
          s.heads[h].pages.push_back(pi);
          m.note_host_move(s.heads[h], s.heads[h].pages.back(), kt, vt, +1);
        }
      } else {
        s.cache->append(src, t0, t1, *m.acc_arena, *m.acc_arena);
        for (int h = 0; h < m.Hkv; ++h) s.heads[h].pages.push_back(PageInfo{});
      }
    }
  }
  m.rebuild_views();
  pages_migrated_ = 0;
}

void HybridGen::prepare_step(int s) { impl_->io->stage(s); }

void HybridGen::step(int s, StepResult& out) {
  Impl& m = *impl_;
  Accelerator& acc = *m.platform.accelerator;
  ThreadPool& pool = *m.platform.host_pool;
  const Problem& pr = *m.problem;
  const int B = m.B, Hq = m.Hq, Hkv = m.Hkv, d = m.d, G = m.G, P = m.P;
  const float scale = m.shape.softmax_scale();
  m.mig = Traffic{};
  m.migrated_pages_step = 0;
  Traffic& tr = out.traffic;
  int64_t syncs = 0, launches = 0;

  // ---- 1. Structure: boundary (FIFO + scheduler), promotions, append of the new token.
  const int64_t t_begin = now_ns();
  const int64_t n_pages = m.seqs[0].cache->num_pages(0);
  const bool new_page = m.seqs[0].cache->num_tokens(0) % P == 0;
  if (!m.all_fit) {
    window_pages_ = std::max<int64_t>(1, ceil_div(sched_->gpu_window(), P));
    if (m.semantic && cfg_.migrate_every > 0 && s > 0 && s % cfg_.migrate_every == 0)
      m.migrate_pass();
    m.apply_window(n_pages + (new_page ? 1 : 0), window_pages_);
  }
  for (int b = 0; b < B; ++b) {
    const DecodeStep& st = pr.workloads[b].step(s);
    // The new token's k, v were produced on the accelerator: appending is accelerator-local.
    m.seqs[b].cache->append_token(st.k.data(), st.v.data(), *m.acc_arena, *m.acc_arena);
    for (int h = 0; h < Hkv; ++h)
      if (new_page) m.seqs[b].heads[h].pages.push_back(PageInfo{});
  }
  if (new_page) m.dirty = true;
  if (m.dirty)
    m.rebuild_views();
  else
    m.refresh_counts();
  pages_migrated_ += m.migrated_pages_step;
  const int64_t t_struct = now_ns();
  out.phase_ns[phase::kMigrate] = t_struct - t_begin;

  // Token counts per head (CPU side, accelerator side).
  int64_t cpu_tok_sum = 0, acc_tok_sum = 0;
  for (const auto& sq : m.seqs)
    for (int h = 0; h < Hkv; ++h) {
      cpu_tok_sum += sq.cpu_view[h].num_tokens;
      acc_tok_sum += sq.acc_view[h].num_tokens;
    }
  const bool has_cpu = cpu_tok_sum > 0;

  // Rows shipped per query head: k = min(C, ceil(ratio * C)), within the buffers.
  const double ratio = sched_->ratio();
  int64_t n_ext = 0;
  bool approx = false;
  if (has_cpu && m.logit) {
    for (int b = 0; b < B; ++b)
      for (int qh = 0; qh < Hq; ++qh) {
        const int64_t c = m.seqs[b].cpu_view[m.shape.kv_head_of(qh)].num_tokens;
        int64_t k =
            std::min<int64_t>(c, static_cast<int64_t>(std::ceil(ratio * static_cast<double>(c))));
        k = std::min(k, m.k_cap);
        m.krow[static_cast<size_t>(b) * Hq + qh] = k;
        n_ext = std::max(n_ext, k);
        if (k < c) approx = true;
      }
    for (int b = 0; b < B; ++b)
      for (int h = 0; h < Hkv; ++h)
        m.seqs[b].heads[h].last_k = m.krow[static_cast<size_t>(b) * Hq + h * G];
  }

  // ---- 2. q down to the host (the CPU side needs it).
  int64_t transfer_ns = 0, acc_ns = 0, merge_ns = 0, wait_ns = 0;
  int64_t sync_q_wall = 0, sync_up_wall = 0, sync_final_wall = 0;  // host wall blocked in each sync
  if (has_cpu) {
    const int64_t t0 = now_ns();
    acc.copy_to_host(m.io->q_host.data(), m.io->q_dev(), m.io->q_bytes());
    transfer_ns += acc.synchronize();
    sync_q_wall = now_ns() - t0;
    ++syncs;
    tr.d2h_bytes += static_cast<int64_t>(m.io->q_bytes());
  }

  // ---- 3. Accelerator side: attention over its resident tokens, as a partial (o, lse).
  std::vector<DecodeAttentionArgs> args(B);
  for (int b = 0; b < B; ++b) {
    auto& a = args[b];
    a.q = m.io->q_dev() + static_cast<size_t>(b) * Hq * d;
    a.kv = m.acc_view(b);
    a.q_heads = Hq;
    a.scale = scale;
    a.o = (has_cpu ? m.o_loc.as<float>() : m.io->o_dev()) + static_cast<size_t>(b) * Hq * d;
    a.lse = (has_cpu ? m.lse_loc.as<float>() : m.io->lse_dev()) + static_cast<size_t>(b) * Hq;
  }
  const int64_t t_cpu0 = now_ns();
  if (cfg_.overlap || !has_cpu) {
    acc.decode_attention(args.data(), B);
    ++launches;
  }

  // ---- 4. CPU side, concurrently: logits over its tokens, top-k, gather (or exact partial).
  int64_t t_score = 0, t_topk = 0, t_gather = 0, t_cpu1 = t_cpu0;
  const size_t es = m.es;
  if (has_cpu) {
    if (m.logit) {
      for (int b = 0; b < B; ++b)
        cpu::score_logits(m.io->q_host.data() + static_cast<size_t>(b) * Hq * d, Hq, m.cpu_view(b),
                          0, -1, scale, m.logits.data() + static_cast<size_t>(b) * Hq * m.ccap,
                          m.ccap, pool);
      t_score = now_ns();
      pool.parallel_for(static_cast<int64_t>(B) * Hq, [&](int64_t row, int) {
        const int b = static_cast<int>(row / Hq), qh = static_cast<int>(row % Hq);
        const int64_t c = m.seqs[b].cpu_view[m.shape.kv_head_of(qh)].num_tokens;
        // Unordered (ascending positions): the gather then reads the V pages in address order.
        cpu::topk_select_rows(m.logits.data() + static_cast<size_t>(row) * m.ccap, 1, c, m.ccap,
                              m.krow[row], m.topi.data() + static_cast<size_t>(row) * n_ext,
                              m.topv.data() + static_cast<size_t>(row) * n_ext, nullptr);
      });
      t_topk = now_ns();
      auto* ext_l = m.ext_logits_host.as<float>();
      auto* ext_v = m.ext_v_host.as<std::byte>();
      pool.parallel_for(static_cast<int64_t>(B) * Hq, [&](int64_t row, int) {
        const int b = static_cast<int>(row / Hq), qh = static_cast<int>(row % Hq);
        const int64_t k = m.krow[row];
        const size_t base = static_cast<size_t>(row) * n_ext;
        cpu::gather_rows(m.cpu_view(b), m.shape.kv_head_of(qh), m.topi.data() + base, k,
                         ext_v + base * d * es);
        std::memcpy(ext_l + base, m.topv.data() + base, static_cast<size_t>(k) * 4);
        // Padding rows (heads with fewer CPU tokens) weigh exactly zero.
        for (int64_t i = k; i < n_ext; ++i) ext_l[base + i] = kNegInf;
        if (k < n_ext)
          std::memset(ext_v + (base + k) * d * es, 0, static_cast<size_t>(n_ext - k) * d * es);
      });
      t_gather = now_ns();
    } else {
      std::vector<DecodeAttentionArgs> cargs(B);
      for (int b = 0; b < B; ++b) {
        auto& a = cargs[b];
        a.q = m.io->q_host.data() + static_cast<size_t>(b) * Hq * d;
        a.kv = m.cpu_view(b);
        a.q_heads = Hq;
        a.scale = scale;
        a.o = m.o_cpu_host.as<float>() + static_cast<size_t>(b) * Hq * d;
        a.lse = m.lse_cpu_host.as<float>() + static_cast<size_t>(b) * Hq;
      }
      cpu::decode_attention(cargs.data(), B, pool);
      t_score = now_ns();
    }
    t_cpu1 = now_ns();
    if (!cfg_.overlap) {  // ablation: the accelerator starts only now
      acc.decode_attention(args.data(), B);
      ++launches;
    }
    // ---- 5. Join: the accelerator side's busy time.
    acc_ns = acc.synchronize();
    ++syncs;
    wait_ns = now_ns() - t_cpu1;

    // ---- 6. Transfer: top-k logits + V rows (or the exact partial) up to the accelerator.
    const size_t qn = static_cast<size_t>(B) * Hq;
    if (m.logit) {
      const size_t lb = qn * n_ext * 4, vb = qn * n_ext * d * es;
      acc.copy_to_device(m.ext_logits_dev.data(), m.ext_logits_host.data(), lb);
      acc.copy_to_device(m.ext_v_dev.data(), m.ext_v_host.data(), vb);
      tr.h2d_bytes += static_cast<int64_t>(lb + vb);
    } else {
      acc.copy_to_device(m.o_x.data(), m.o_cpu_host.data(), qn * d * 4);
      acc.copy_to_device(m.lse_x.data(), m.lse_cpu_host.data(), qn * 4);
      tr.h2d_bytes += static_cast<int64_t>(qn * (d + 1) * 4);
    }
    const int64_t t_up = now_ns();
    transfer_ns += acc.synchronize();
    sync_up_wall = now_ns() - t_up;
    ++syncs;

    // ---- 7. Merge: one softmax over [CPU top-k | accelerator] logits. The accelerator's part
    // is already a flash-decoding partial; the shipped logits become a second partial and the
    // two merge exactly (the same softmax over the union). lse mode merges the partials.
    if (m.logit) {
      LogitMergeArgs la;
      la.q = m.io->q_dev();
      la.q_heads = static_cast<int>(qn);  // every (sequence, head) row at once: no local part
      la.scale = scale;
      la.ext_logits = m.ext_logits_dev.as<float>();
      la.ext_v = m.ext_v_dev.data();
      la.ext_dtype = m.shape.kv_dtype;
      la.n_ext = n_ext;
      la.local = PagedKvView{0, d, P, m.shape.kv_dtype, nullptr};
      la.o = m.o_x.as<float>();
      la.lse = m.lse_x.as<float>();
      acc.logit_merge_attention(la);
      ++launches;
    }
    const float* o_parts[2] = {m.o_x.as<float>(),
                               m.o_loc.as<float>()};  // fixed order: CPU, accelerator
    const float* l_parts[2] = {m.lse_x.as<float>(), m.lse_loc.as<float>()};
    acc.merge_partials(2, o_parts, l_parts, static_cast<int>(qn), d, m.io->o_dev(),
                       m.io->lse_dev());
    ++launches;
  }
  acc.copy_to_host(m.io->o_host.data(), m.io->o_dev(), m.io->o_bytes());
  const int64_t t_pre_book = now_ns();

  // ---- 8. Bookkeeping while the accelerator merges: attended positions, page hits, traffic.
  const int64_t row_v = static_cast<int64_t>(d * es);
  std::vector<int64_t> v_rows_by_tier(m.platform.host_tiers.size(), 0);
  if (has_cpu && m.logit) {
    const bool fill = cfg_.report_attended && approx;
    if (fill) out.attended.assign(static_cast<size_t>(B) * Hq, {});
    for (int b = 0; b < B; ++b) {
      SeqState& sq = m.seqs[b];
      for (int qh = 0; qh < Hq; ++qh) {
        const size_t row = static_cast<size_t>(b) * Hq + qh;
        const int h = m.shape.kv_head_of(qh);
        HeadState& hs = sq.heads[h];
        const int32_t* ix = m.topi.data() + row * n_ext;
        const int64_t k = m.krow[row];
        std::vector<int64_t>* att = fill ? &out.attended[row] : nullptr;
        if (att) att->reserve(static_cast<size_t>(k + sq.acc_view[h].num_tokens));
        for (int64_t i = 0; i < k; ++i) {
          const int32_t pid = hs.cpu_ids[ix[i] / P];
          PageInfo& pi = hs.pages[pid];
          pi.hits++;
          v_rows_by_tier[pi.v_tier]++;
          if (att) att->push_back(static_cast<int64_t>(pid) * P + ix[i] % P);
        }
        if (att) {
          const int64_t na = static_cast<int64_t>(hs.acc_ids.size());
          for (int64_t j = 0; j < na; ++j) {
            const int64_t base = static_cast<int64_t>(hs.acc_ids[j]) * P;
            const int64_t cnt = j + 1 < na ? P : sq.acc_view[h].num_tokens - (na - 1) * P;
            for (int64_t t = 0; t < cnt; ++t) att->push_back(base + t);
          }
        }
      }
      // Page scores: EMA of hits per step on the host, frozen while promoted.
      const float a = static_cast<float>(cfg_.score_alpha);
      for (int h = 0; h < Hkv; ++h)
        for (auto& pi : sq.heads[h].pages) {
          if (pi.home == PageHome::host)
            pi.score = (1 - a) * pi.score + a * static_cast<float>(pi.hits);
          pi.hits = 0;
        }
    }
  }
  // Traffic, counted from the sizes asked for.
  const int64_t kv_tok =
      static_cast<int64_t>(2) * d * static_cast<int64_t>(es);  // K+V of one token, one head
  for (const auto& sq : m.seqs)
    for (int h = 0; h < Hkv; ++h) {
      const HeadState& hs = sq.heads[h];
      for (size_t t = 0; t < m.platform.host_tiers.size() && has_cpu; ++t) {
        const MemoryKind kind = m.tier_kind(static_cast<int>(t));
        tr.read(Processor::cpu, kind, hs.cpu_k_pages_by_tier[t] * static_cast<int64_t>(m.block));
        if (!m.logit)
          tr.read(Processor::cpu, kind, hs.cpu_v_pages_by_tier[t] * static_cast<int64_t>(m.block));
      }
      tr.read(Processor::accelerator, MemoryKind::accelerator, sq.acc_view[h].num_tokens * kv_tok);
    }
  for (size_t t = 0; t < v_rows_by_tier.size(); ++t)
    tr.read(Processor::cpu, m.tier_kind(static_cast<int>(t)), v_rows_by_tier[t] * row_v);
  const size_t qn = static_cast<size_t>(B) * Hq;
  if (has_cpu && m.logit)
    tr.read(Processor::accelerator, MemoryKind::accelerator,
            static_cast<int64_t>(qn) * n_ext * (4 + row_v));
  tr.write(Processor::accelerator, MemoryKind::accelerator, m.shape.kv_bytes_per_token() * B);
  tr.cpu_flops = (m.logit ? 2.0 : 4.0) * Hq * d * static_cast<double>(cpu_tok_sum) / Hkv;
  // Logit mode: each query head's top-k scans the logits of all its CPU tokens.
  if (m.logit) tr.select(Processor::cpu, static_cast<double>(cpu_tok_sum) * Hq / Hkv);
  tr.accelerator_flops = 4.0 * Hq * d * static_cast<double>(acc_tok_sum) / Hkv +
                         (m.logit ? 2.0 * static_cast<double>(qn) * n_ext * d : 0.0);
  tr += m.mig;
  const int64_t t_book = now_ns();

  // ---- 9. Wait for the merge and the output.
  merge_ns = acc.synchronize();
  sync_final_wall = now_ns() - t_book;
  ++syncs;
  if (!has_cpu) acc_ns = merge_ns, merge_ns = 0;
  out.o = m.io->o_host;
  tr.kernel_launches += launches;
  tr.syncs += syncs;

  // Phases.
  const int64_t cpu_ns = has_cpu ? t_cpu1 - t_cpu0 : 0;
  out.phase_ns[phase::kCpu] = cpu_ns;
  if (has_cpu && m.logit) {
    out.phase_ns[phase::kCpuScore] = t_score - t_cpu0;
    out.phase_ns[phase::kCpuTopk] = t_topk - t_score;
    out.phase_ns[phase::kCpuGather] = t_gather - t_topk;
  } else if (has_cpu) {
    out.phase_ns[phase::kCpuAttention] = t_score - t_cpu0;
  }
  out.phase_ns[phase::kAccelerator] = acc_ns;
  out.phase_ns[phase::kTransfer] = transfer_ns;
  out.phase_ns[phase::kMerge] = merge_ns;
  out.phase_ns[phase::kWait] = wait_ns;
  out.phase_ns[phase::kBookkeeping] = t_book - t_pre_book;
  // Host wall time blocked in the other synchronisations (busy time + hand-off latency).
  out.phase_ns[phase::kSyncQ] = sync_q_wall;
  out.phase_ns[phase::kSyncUp] = sync_up_wall;
  out.phase_ns[phase::kSyncFinal] = sync_final_wall;

  // ---- 10. Scheduler: CPU side = scoring, top-k, gather and the copy up.
  const int64_t heads_total = static_cast<int64_t>(B) * Hkv;
  sched_->record(s, static_cast<double>(cpu_ns + (has_cpu ? transfer_ns : 0)),
                 static_cast<double>(acc_ns), cpu_tok_sum / heads_total, acc_tok_sum / heads_total);
}

std::vector<MemoryRegion> HybridGen::memory_regions() const {
  std::vector<MemoryRegion> r;
  if (!impl_) return r;
  const Impl& m = *impl_;
  for (const auto& [p, n] : m.acc_arena->slabs())
    r.push_back({p, n, m.acc_arena->location(), "K+V"});
  for (size_t t = 0; t < m.k_arenas.size(); ++t) {
    if (m.k_arenas[t])
      for (const auto& [p, n] : m.k_arenas[t]->slabs())
        r.push_back({p, n, m.k_arenas[t]->location(), "K"});
    if (m.v_arenas[t])
      for (const auto& [p, n] : m.v_arenas[t]->slabs())
        r.push_back({p, n, m.v_arenas[t]->location(), "V"});
  }
  return r;
}

std::vector<std::map<std::string, double>> HybridGen::trajectory() const {
  std::vector<std::map<std::string, double>> rows;
  if (!sched_) return rows;
  for (const auto& row : sched_->rows()) rows.push_back(row.as_map());
  return rows;
}

std::map<std::string, int64_t> HybridGen::block_placement() const {
  std::map<std::string, int64_t> c;
  const Impl& m = *impl_;
  for (const auto& sq : m.seqs)
    for (int h = 0; h < m.Hkv; ++h)
      for (int64_t i = 0; i < sq.cache->num_pages(h); ++i) {
        c["K@" + sq.cache->k_location(h, i).to_string()]++;
        c["V@" + sq.cache->v_location(h, i).to_string()]++;
      }
  return c;
}

PageHome HybridGen::page_home(int b, int h, int64_t i) const {
  return impl_->seqs[b].heads[h].pages[i].home;
}
MemoryLocation HybridGen::page_k_location(int b, int h, int64_t i) const {
  return impl_->seqs[b].cache->k_location(h, i);
}
MemoryLocation HybridGen::page_v_location(int b, int h, int64_t i) const {
  return impl_->seqs[b].cache->v_location(h, i);
}

}  // namespace hb::hybrid
