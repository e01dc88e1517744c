// The accelerator budget ([OURS]; hybrid/README.md, "Boundary default"): after the step
// buffers, the accelerator holds the recent window, the hot-page slots (mechanism 3) and the
// shipped-row buffers (mechanism 1's top-k logits + V rows). Sized from
// HybridGenConfig::budget_config(), so every ablation gets the window `hybridgen` gets.
#include <algorithm>
#include <cmath>

#include "hybrid/hybridgen_impl.h"

namespace hb::hybrid {

namespace {

// Page layout for a given accelerator page count: hot slots, window, smallest window.
struct Layout {
  int64_t hot = 0, w = 0, wmin = 0;
};

struct BudgetInputs {
  const HybridGenConfig& c;  // the configuration the budget is sized for
  int64_t P, t_end, pages_end, B, Hq, row_bytes, avail;
};

Layout layout_of(const BudgetInputs& in, int64_t acc_pages) {
  const HybridGenConfig& c = in.c;
  const bool adapt_boundary = c.scheduler.adaptive && c.scheduler.adapt_boundary;
  Layout l;
  l.hot = c.semantic() ? static_cast<int64_t>(c.hot_share * static_cast<double>(acc_pages)) : 0;
  l.w = std::max<int64_t>(1, acc_pages - l.hot);
  if (c.gpu_tokens >= 0) l.w = std::clamp<int64_t>(ceil_div(c.gpu_tokens, in.P), 1, l.w);
  if (c.min_host_share > 0)
    l.w = std::min(
        l.w, std::max<int64_t>(1, static_cast<int64_t>((1.0 - c.min_host_share) * in.pages_end)));
  l.wmin = adapt_boundary ? std::clamp<int64_t>(ceil_div(c.min_gpu_tokens, in.P), 1, l.w) : l.w;
  return l;
}

// The most CPU tokens a head can have: everything but the smallest window (whose last page may
// hold a single token).
int64_t c_max_of(const BudgetInputs& in, const Layout& l) {
  return std::max<int64_t>(0, in.t_end - (l.wmin - 1) * in.P);
}

// Largest top-k ratio the shipped-row buffers must serve.
double ratio_to_serve(const HybridGenConfig& c) {
  return c.scheduler.adaptive ? std::max(c.ratio, c.scheduler.ratio_max) : c.ratio;
}

// Shipped rows per query head needed at the longest context, and the bytes granted to them
// (within ext_share of the budget; exact mode takes what it needs).
std::pair<int64_t, int64_t> ext_of(const BudgetInputs& in, const Layout& l) {
  const HybridGenConfig& c = in.c;
  const bool exact = c.ratio >= 1.0 && !c.scheduler.adaptive;
  const int64_t k_need = c.logit() ? static_cast<int64_t>(std::ceil(
                                         ratio_to_serve(c) * static_cast<double>(c_max_of(in, l))))
                                   : 0;
  const int64_t need = in.B * in.Hq * k_need * in.row_bytes;
  const int64_t share = static_cast<int64_t>(c.ext_share * static_cast<double>(in.avail));
  return {k_need, exact ? need : std::min(need, share)};
}

// Fixed point: fewer accelerator pages -> more CPU tokens -> more shipped rows (monotone).
int64_t solve_acc_pages(const BudgetInputs& in, int64_t page_slot) {
  int64_t acc_pages = std::max<int64_t>(0, in.avail / page_slot);
  for (int iter = 0; iter < 256 && acc_pages > 0; ++iter) {
    const int64_t next =
        std::max<int64_t>(0, (in.avail - ext_of(in, layout_of(in, acc_pages)).second) / page_slot);
    if (next == acc_pages) break;
    acc_pages = next;
  }
  return acc_pages;
}

}  // namespace

// run --kv-budget: half the budget (whole pages, at least one) on the accelerator as window
// plus hot slots (split as hot_share), as far as its memory holds them; the CPU ships the rest
// as its top-k (ratio pinned at 1). The resident side holds fewer tokens than its pages while
// the newest page is partly filled and hot slots are not yet promoted into, so each step's k
// is the budget minus the tokens its head really has resident (choose_rows): resident + top-k
// = the budget at every step. The shipped-row buffers are sized for the fewest resident
// tokens: a window whose newest page holds one token and no hot page.
bool HybridGen::Impl::apply_token_budget(int64_t acc_pages_fit, int64_t avail, int64_t page_slot,
                                         int64_t row_bytes, PlanResult& r) {
  const HybridGenConfig& c = cfg();
  const int64_t budget = problem->kv_budget_tokens;
  const int64_t acc_pages = std::clamp<int64_t>(ceil_div(budget / 2, P), 1, acc_pages_fit);
  const int64_t hot =
      c.budget_config().semantic()
          ? std::min(acc_pages - 1,
                     static_cast<int64_t>(c.hot_share * static_cast<double>(acc_pages)))
          : 0;
  self.acc_pages_ = acc_pages;
  self.hot_slots_ = hot;
  self.window_pages_ = acc_pages - hot;
  min_window_pages = self.window_pages_;
  ccap = std::max<int64_t>(0, t_end - (self.window_pages_ - 1) * P);
  k_cap = logit ? std::clamp<int64_t>(budget - ((self.window_pages_ - 1) * P + 1), 0, ccap) : 0;
  ext_bytes = static_cast<int64_t>(B) * Hq * k_cap * row_bytes;
  ratio_limit = 1.0;
  ext_note.clear();
  if (acc_pages * page_slot + ext_bytes > avail) {
    r.status = PlanStatus::oom;
    r.reason = "--kv-budget " + std::to_string(budget) + ": " + std::to_string(acc_pages) +
               " accelerator pages per head and " + std::to_string(k_cap) +
               " shipped rows per query head do not fit the accelerator budget (" +
               std::to_string(avail >> 20) + " MiB)";
    return false;
  }
  budget_mapping =
      logit ? "accelerator " + std::to_string(acc_pages * P) + " (window " +
                  std::to_string(self.window_pages_ * P) + " + hot " + std::to_string(hot * P) +
                  ") + CPU top-k = " + std::to_string(budget) +
                  " - the tokens resident that step (at most " + std::to_string(k_cap) +
                  ": ratio pinned at 1, boundary fixed; empty hot slots and a partly filled "
                  "newest page leave more to the top-k)"
            : "accelerator window " + std::to_string(acc_pages * P) +
                  " (lse merge: the CPU attends every host token exactly, so the budget sizes "
                  "the window only)";
  return true;
}

bool HybridGen::Impl::plan_budget(PlanResult& r) {
  const HybridGenConfig& c = cfg();
  const HybridGenConfig bc = c.budget_config();
  // What is left after the step buffers (q, k, v, o, lse and two partials).
  Accelerator& acc = *platform.accelerator;
  const int64_t cap = acc.info().capacity_bytes - acc.bytes_in_use();
  const int64_t fixed = static_cast<int64_t>(B) * (2LL * Hq * d + 2LL * Hkv * d + Hq) * 4 +
                        2LL * B * Hq * (d + 1) * 4;
  const int64_t page_slot = 2LL * static_cast<int64_t>(block) * Hkv * B;  // one page index, K+V
  // The hot pages' logits, for refreshing their scores (page_homes.cpp), at most hot_share of
  // the pages that could fit.
  const int64_t hot_bound =
      bc.semantic() && bc.logit()
          ? static_cast<int64_t>(bc.hot_share * static_cast<double>((cap - fixed) / page_slot))
          : 0;
  const int64_t avail = cap - fixed - hot_bound * P * Hq * B * 4;
  budget_bytes = avail;
  // One shipped entry: its logit, its row index (ship_rows=group) and a V row; sized the same
  // under either ship_rows, so both ship modes run on one layout.
  const int64_t row_bytes = 8 + static_cast<int64_t>(d * es);

  const int64_t budget = problem->kv_budget_tokens;
  all_fit = c.min_host_share == 0 && c.gpu_tokens < 0 && cap - fixed >= pages_end * page_slot &&
            (budget <= 0 || budget >= t_end);  // a budget below the context keeps a host side
  if (all_fit) {
    self.acc_pages_ = self.window_pages_ = pages_end;
    self.hot_slots_ = 0;
    min_window_pages = 1;
    return true;
  }
  const BudgetInputs in{bc, P, t_end, pages_end, B, Hq, row_bytes, avail};
  const int64_t acc_pages = solve_acc_pages(in, page_slot);
  const Layout l = layout_of(in, acc_pages);
  const auto [k_need, ext] = ext_of(in, l);
  ext_bytes = ext;
  k_cap = bc.logit() ? std::min(k_need, ext_bytes / (static_cast<int64_t>(B) * Hq * row_bytes)) : 0;
  ccap = c_max_of(in, l);
  self.acc_pages_ = acc_pages;
  self.hot_slots_ = l.hot;
  self.window_pages_ = l.w;
  min_window_pages = l.wmin;
  if (self.acc_pages_ * page_slot + ext_bytes > avail) self.acc_pages_ = 0;  // did not converge
  if (self.acc_pages_ < self.window_pages_ + self.hot_slots_ || self.acc_pages_ < 1) {
    r.status = PlanStatus::oom;
    r.reason = "the accelerator budget (" + std::to_string(cap >> 20) +
               " MiB free) cannot hold one page per KV head" +
               (bc.logit() && ext_bytes > 0
                    ? " next to " + std::to_string(ext_bytes >> 20) + " MiB for shipped rows"
                    : "");
    return false;
  }
  ratio_limit = ccap > 0 ? static_cast<double>(k_cap) / static_cast<double>(ccap) : 1.0;
  if (budget > 0) return apply_token_budget(avail / page_slot, avail, page_slot, row_bytes, r);
  if (logit &&
      k_cap < static_cast<int64_t>(std::ceil(ratio_to_serve(bc) * static_cast<double>(ccap))))
    ext_note = "shipped-row buffers hold " + std::to_string(k_cap) +
               " rows per query head (ratio " + std::to_string(ratio_limit) +
               " at the longest context; raise ext_share or the budget)";
  return true;
}

}  // namespace hb::hybrid
