// HybridGen's glue: plan (budget, tiers, scheduler, the parameters the report shows), load,
// and inspection. The mechanisms live in logit_parallelism.cpp, feedback_scheduler.* and
// kv_mapping.* (hybrid/hybridgen_impl.h lists every file).
#include "hybrid/hybridgen.h"

#include <algorithm>

#include "hybrid/hybridgen_impl.h"

namespace hb::hybrid {

HybridGen::HybridGen(std::string name, HybridGenConfig cfg)
    : name_(std::move(name)), cfg_(std::move(cfg)) {}
HybridGen::~HybridGen() = default;

void HybridGen::Impl::set_problem(const Problem& pr, const Platform& pl) {
  problem = &pr;
  platform = pl;
  shape = pr.shape;
  B = pr.batch;
  P = pr.page_tokens;
  Hq = shape.q_heads;
  Hkv = shape.kv_heads;
  d = shape.head_dim;
  G = shape.group_size();
  es = dtype_size(shape.kv_dtype);
  block = static_cast<size_t>(P) * d * es;
  t_end = pr.prompt_len() + pr.decode_steps();
  pages_end = ceil_div(t_end, P);
  logit = cfg().logit();
  semantic = cfg().semantic();
  mapping = KvMapping(cfg().kv_mapping_options());
  ship_group = cfg().ship_rows == ShipRows::group ? G : 1;
}

PlanResult HybridGen::plan(const Problem& problem, const Platform& platform) {
  impl_ = std::make_unique<Impl>(*this);
  Impl& m = *impl_;
  m.set_problem(problem, platform);
  PlanResult r;
  if (platform.host_tiers.empty()) {
    r.status = PlanStatus::unsupported;
    r.reason = "no host memory tier to hold the older tokens' KV";
    return r;
  }
  if (!m.choose_tiers(r) || !m.plan_budget(r) || !m.check_host_capacity(r)) return r;

  // When the whole KV fits, the CPU side never has tokens: nothing for the scheduler to adapt.
  SchedulerConfig sc = cfg_.scheduler;
  if (m.all_fit) sc.adaptive = false;
  if (!m.logit) sc.adapt_ratio = false;  // lse mode has no top-k: the ratio is unused
  // With cpu_k_cap the CPU's cost no longer scales with its tokens, which the boundary rule's
  // per-token model assumes: keep the port's fixed FIFO window then.
  if (m.logit && sc.cpu_k_cap > 0) sc.adapt_boundary = false;
  // run --kv-budget: the split between window and top-k is the budget's, not the scheduler's.
  const bool budgeted = m.budgeted() && !m.all_fit;
  if (budgeted) sc.adapt_ratio = sc.adapt_boundary = false;
  sched_ = std::make_unique<FeedbackScheduler>(sc, budgeted && m.logit ? 1.0 : cfg_.ratio,
                                               window_pages_ * m.P);
  sched_->set_window_limits(m.min_window_pages * m.P,
                            std::max<int64_t>(1, acc_pages_ - hot_slots_) * m.P);
  if (m.all_fit) sched_->set_window_limits(window_pages_ * m.P, window_pages_ * m.P);
  // The ratio never climbs past what the shipped-row buffers ship (no wind-up).
  if (!m.all_fit && m.logit) sched_->set_ratio_limit(m.ratio_limit);
  sched_->set_cap_limit(std::max<int64_t>(1, m.ccap));
  describe(r.parameters);
  // Model mode: the split adapts to the projected platform's times (the trajectory records them
  // even where nothing adapts), so each platform executes its own trajectory: the parameter keeps
  // plans of different platforms apart (model/shared_execution.h).
  if (platform.step_times) r.parameters["scheduler.times"] = platform.step_times->describe();
  if (m.budgeted())
    r.parameters["kv_budget_mapping"] =
        m.all_fit ? "dense: the budget holds the whole context" : m.budget_mapping;
  return r;
}

void HybridGen::describe(std::map<std::string, std::string>& par) const {
  const Impl& m = *impl_;
  const bool adapt_boundary = cfg_.scheduler.adaptive && cfg_.scheduler.adapt_boundary;
  par["merge"] = kMergeModes.name(cfg_.merge);
  par["ratio"] = m.logit ? std::to_string(cfg_.ratio) : "unused (lse: every host token)";
  par["topk_rounding"] = "k = min(C, ceil(ratio * C)) per query head, C = that head's CPU tokens";
  par["scheduler"] = cfg_.scheduler.adaptive ? "feedback" : "static";
  par["scheduler.interval"] = std::to_string(cfg_.scheduler.interval);
  par["scheduler.ratio_range"] =
      std::to_string(cfg_.scheduler.ratio_min) + ".." + std::to_string(cfg_.scheduler.ratio_max);
  par["scheduler.ratio_ceiling"] = std::to_string(sched_->ratio_ceiling());
  par["cpu_k_cap"] = cfg_.scheduler.cpu_k_cap > 0
                         ? std::to_string(sched_->cpu_k_cap()) + " host tokens scored per head" +
                               (cfg_.scheduler.adapt_cpu_k_cap ? " (adaptive, [PORT])" : "")
                         : "off (every host token scored)";
  par["boundary"] = adapt_boundary ? "adaptive (ours: toward the equalising split)" : "fixed";
  par["accelerator_pages_per_head"] = std::to_string(acc_pages_);
  par["gpu_window_tokens"] = std::to_string(window_pages_ * m.P);
  // The ablations' common ground: equal across variants under budget=hybridgen.
  par["accelerator_window_tokens"] = std::to_string(window_pages_ * m.P);
  par["accelerator_budget_bytes"] = std::to_string(m.budget_bytes);
  par["budget"] = std::string(kBudgetPolicies.name(cfg_.budget)) +
                  (cfg_.budget == BudgetPolicy::hybridgen
                       ? " (window, hot slots and shipped-row buffers sized as hybridgen's)"
                       : " (sized for this variant's own mechanisms)");
  par["min_gpu_window_tokens"] = std::to_string(m.min_window_pages * m.P);
  par["hot_pages_per_head"] = std::to_string(hot_slots_);
  par["all_kv_on_accelerator"] = m.all_fit ? "yes (KV fits; CPU side idle)" : "no";
  par["shipped_rows_per_head"] = std::to_string(m.k_cap);
  par["shipped_row_bytes"] = std::to_string(m.ext_bytes);
  if (!m.ext_note.empty()) par["shipped_rows_note"] = m.ext_note;
  m.mapping.describe(par);
  par["overlap"] = cfg_.overlap ? "on" : "off (ablation: CPU side then accelerator side)";
  if (m.logit)
    par["cpu_select"] = cfg_.cpu_select == CpuSelect::fused
                            ? "fused (score + streaming top-k in one pass; cpu.score is both)"
                            : "separate (logit array, then top-k)";
  par["host_threads"] = std::to_string(m.platform.host_pool ? m.platform.host_pool->size() : 0);
}

void HybridGen::load() {
  Impl& m = *impl_;
  Accelerator& acc = *m.platform.accelerator;
  m.io = std::make_unique<StepIO>(*m.problem, acc);
  auto mem = acc.memory();
  const size_t qn = static_cast<size_t>(m.B) * m.Hq;
  m.o_loc = mem->allocate(qn * m.d * 4);
  m.lse_loc = mem->allocate(qn * 4);
  m.o_x = mem->allocate(qn * m.d * 4);
  m.lse_x = mem->allocate(qn * 4);
  auto staging = acc.staging_memory(m.platform.cpu_node);
  if (!m.all_fit) {
    // Allocated whenever the budget holds them (budget=hybridgen: in every variant, so an
    // ablation's accelerator memory is hybridgen's).
    if (m.k_cap > 0) {
      m.ext_logits_dev = mem->allocate(qn * m.k_cap * 4);
      m.ext_rows_dev = mem->allocate(qn * m.k_cap * 4);
      m.ext_v_dev = mem->allocate(qn * m.k_cap * m.d * m.es);
      m.ext_logits_host = staging->allocate(qn * m.k_cap * 4);
      m.ext_rows_host = staging->allocate(qn * m.k_cap * 4);
      m.ext_v_host = staging->allocate(qn * m.k_cap * m.d * m.es);
      m.topi.resize(qn * m.k_cap);
      m.topv.resize(qn * m.k_cap);
      if (m.shared_rows()) m.urows.resize(qn * m.k_cap);
    }
    m.ucount.assign(qn, 0);  // shipped rows per block: none when k_cap is 0 (a tiny --kv-budget)
    if (m.logit && cfg_.cpu_select == CpuSelect::separate) m.logits.resize(qn * m.ccap);
    m.o_cpu_host = staging->allocate(qn * m.d * 4);
    m.lse_cpu_host = staging->allocate(qn * 4);
  }
  m.krow.assign(qn, 0);
  // No hint before the first selection (NaN: the sampled floors).
  if (m.logit && cfg_.cpu_select == CpuSelect::fused && cfg_.select_hint)
    m.floor_hint.assign(qn, std::numeric_limits<float>::quiet_NaN());
  const HybridGenConfig bc = cfg_.budget_config();
  if (!m.all_fit && bc.logit() && bc.semantic() && hot_slots_ > 0) {
    m.hot_logits_dev = mem->allocate(qn * m.hot_logit_tokens() * 4);
    m.hot_logits_host.assign(qn * m.hot_logit_tokens(), 0.0f);
    if (m.logit && m.semantic) m.kth_logit.assign(qn, kNegInf);  // refreshes only here
  }
  const size_t blocks_per_page_index = static_cast<size_t>(m.Hkv) * m.B;
  m.acc_arena = std::make_unique<PageArena>(mem, m.block, 64);
  m.acc_arena->reserve(static_cast<size_t>(acc_pages_) * 2 * blocks_per_page_index);
  if (!m.all_fit) m.reserve_host_arenas();
  m.load_prompt();
  pages_migrated_ = 0;
}

void HybridGen::prepare_step(int s) { impl_->io->stage(s); }

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
float HybridGen::page_score(int b, int h, int64_t i) const {
  return impl_->seqs[b].heads[h].pages[i].score;
}
MemoryLocation HybridGen::page_k_location(int b, int h, int64_t i) const {
  return impl_->seqs[b].cache->k_location(h, i);
}
MemoryLocation HybridGen::page_v_location(int b, int h, int64_t i) const {
  return impl_->seqs[b].cache->v_location(h, i);
}

}  // namespace hb::hybrid
