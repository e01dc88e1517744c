#include "reports/compare.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "core/error.h"
#include "core/stats.h"
#include "reports/format.h"
#include "reports/mann_whitney.h"

namespace hb::reports {

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::faster:
      return "FASTER";
    case Verdict::slower:
      return "SLOWER";
    case Verdict::same:
      return "SAME";
    case Verdict::noisy:
      return "NOISY";
    case Verdict::inconclusive:
      return "INCONCLUSIVE";
    case Verdict::failed:
      return "FAILED";
    case Verdict::recovered:
      return "RECOVERED";
    case Verdict::untimed:
      return "UNTIMED";
    case Verdict::missing:
      return "MISSING";
    case Verdict::added:
      return "NEW";
  }
  return "?";
}

void validate(const CompareOptions& o) {
  auto bad = [](const std::string& what, const std::string& fix) { throw Error(what, fix); };
  if (!(o.threshold > 0)) bad("--threshold must be > 0", "e.g. --threshold 0.05 for 5%");
  if (!(o.alpha > 0 && o.alpha < 1)) bad("--alpha must be in (0, 1)", "e.g. --alpha 0.01");
  if (!(o.min_effect >= 0)) bad("--min-effect must be >= 0", "e.g. --min-effect 0.02 for 2%");
  if (o.min_effect > o.threshold)
    bad("--min-effect (" + format_percent(o.min_effect) + ") is larger than --threshold (" +
            format_percent(o.threshold) +
            "): a slowdown between them would be called SAME and never fail",
        "set --min-effect at or below --threshold");
  if (!(o.max_noise > 0)) bad("--max-noise must be > 0", "e.g. --max-noise 10 for 10%");
  if (!(o.drift_allowance >= 0))
    bad("--drift-allowance must be >= 0",
        "e.g. --drift-allowance 0.5 for 50%, or 0 to judge single-pass changes as significant");
  if (!(o.relative_allowance >= 0 && o.relative_allowance < 1))
    bad("relative_allowance must be in [0, 1)", "e.g. 0.08 for 8%");
  if (!(o.control_allowance >= 0 && o.control_allowance < 1))
    bad("control_allowance must be in [0, 1)", "e.g. 0.10 for 10%");
  if (!(o.group_drift >= 0 && o.group_drift < 1))
    bad("--group-drift must be in [0, 1)",
        "e.g. --group-drift 0.2 for 20%, or 0 to judge every point on its own change");
}

int CompareResult::count(Verdict v) const {
  int n = 0;
  for (const auto& p : points) n += p.verdict == v;
  return n;
}

int CompareResult::timed_pairs() const {
  int n = 0;
  for (const auto& p : points) n += is_timed(p.verdict);
  return n;
}

int CompareResult::unjudged() const {
  int n = 0;
  for (const auto& p : points) n += is_unjudged(p.verdict);
  return n;
}

CompareResult::Outcome CompareResult::outcome() const {
  if (has_regression()) return Outcome::regression;
  return options.fail_unjudged && unjudged() > 0 ? Outcome::unjudged : Outcome::ok;
}

Verdict timing_verdict(const TimingEvidence& e, const CompareOptions& o) {
  const double size = std::fabs(e.change);
  const Verdict moved = e.change > 0 ? Verdict::slower : Verdict::faster;
  // Under --min-effect nothing worth acting on changed, however noisy the runs: identical inputs
  // must read SAME, not NOISY.
  if (size < o.min_effect) return Verdict::same;
  if (!e.testable || !(e.p_value < o.alpha)) return Verdict::noisy;
  // Round medians already carry the drift between rounds: their test is the whole judgement.
  if (e.rounds) return moved;
  // One round: the test saw that run's steps, not the load the other run met. On a noisy run only
  // a change beyond 3x its noise (samples barely overlapping) is trusted, and on any run only one
  // beyond the drift measured between quiet runs.
  if (e.noise > o.max_noise && size <= 3 * e.noise) return Verdict::noisy;
  if (size <= o.drift_allowance) return Verdict::inconclusive;
  return moved;
}

namespace {

std::map<std::string, const Point*> index_points(const Report& r, const char* which) {
  std::map<std::string, const Point*> m;
  for (const auto& p : r.points)
    if (!m.emplace(p.axes.key(), &p).second)
      throw Error(std::string("the ") + which + " report has two points with the same axes (" +
                      p.axes.key() + "), so they cannot be matched",
                  "compare reports from `hybridbench run`, which writes each point once");
  return m;
}

// The medians the U test compares for one side. Both sides with rounds: one per round (rounds
// minutes apart are the replicates that see drift between them). Otherwise one per block of
// consecutive steps (kRoundBlocks); empty when there are too few steps to block.
std::vector<double> tested_medians(const StepTiming& s, bool rounds) {
  if (rounds) return s.pass_medians();
  const size_t n = s.samples_ns.size(), k = kRoundBlocks;
  if (n < k * kMinBlockSteps) return {};
  StepTiming blocks;  // the one round cut into k near-equal blocks, in step order
  blocks.samples_ns = s.samples_ns;
  for (size_t b = 0; b < k; ++b)
    blocks.pass_sizes.push_back(static_cast<int64_t>(n * (b + 1) / k - n * b / k));
  return blocks.pass_medians();
}

// Why a one-round verdict is what it is, for the table's notes.
void one_round_notes(const TimingEvidence& e, const CompareOptions& opt, PointComparison& c) {
  if (!e.testable)
    c.notes.push_back(
        "one round of " + std::to_string(std::min(c.old_step.count, c.new_step.count)) +
        " steps: too few to test (" + std::to_string(kRoundBlocks * kMinBlockSteps) + " a side)");
  else if (c.verdict == Verdict::inconclusive)
    c.notes.push_back("one round: within --drift-allowance " + format_percent(opt.drift_allowance) +
                      "; drift between runs can explain it");
  else if (c.verdict == Verdict::slower || c.verdict == Verdict::faster)
    c.notes.push_back("one round, beyond --drift-allowance " + format_percent(opt.drift_allowance));
}

// Both sides have >= 2 rounds: judged on round medians (else on one round's step blocks).
bool has_rounds(const Point& o, const Point& n) {
  return o.step.pass_sizes.size() >= 2 && n.step.pass_sizes.size() >= 2;
}

bool both_timed(const Point& o, const Point& n) {
  return o.timed() && o.step.summary.median > 0 && n.timed() && n.step.summary.median > 0;
}

// Both sides carry the machine control's time in each of their rounds (>= 2 a side).
bool has_control(const StepTiming& s) {
  return s.pass_sizes.size() >= 2 && s.control_ns.size() == s.pass_sizes.size();
}
bool has_control(const Point& o, const Point& n) {
  return has_control(o.step) && has_control(n.step);
}

// The two points' noise, as the evidence and the comparison carry it.
void weigh_noise(const Point& o, const Point& n, const CompareOptions& opt, TimingEvidence& e,
                 PointComparison& c) {
  const double noise_o = robust_rel_noise(o.step.summary),
               noise_n = robust_rel_noise(n.step.summary);
  c.change_rel_noise = std::hypot(noise_o, noise_n);
  e.noise = std::max(noise_o, noise_n);
  c.too_noisy = e.noise > opt.max_noise;
}

// The U test of OLD's against NEW's medians, where both have some.
void test_medians(const std::vector<double>& mo, const std::vector<double>& mn, TimingEvidence& e,
                  PointComparison& c) {
  c.old_medians = static_cast<int>(mo.size());
  c.new_medians = static_cast<int>(mn.size());
  e.testable = !mo.empty() && !mn.empty();
  if (!e.testable) return;
  const UTest t = mann_whitney_u(mo, mn);
  e.p_value = c.p_value = t.p_value;
  c.exact_test = t.exact;
}

// Each round's median over `ref`'s value in that round (the same rounds of the same run).
std::vector<double> relative_medians(const StepTiming& s, const std::vector<double>& ref) {
  std::vector<double> r = s.pass_medians();
  for (size_t i = 0; i < r.size() && i < ref.size(); ++i) r[i] /= ref[i];
  return r;
}

// A point of a group with the machine control, judged on its round medians over a reference in
// the same rounds: its group's median round (it moved with the machine) or the control's
// (the group moved beyond the machine). Round-to-round drift cancels in either.
void judge_relative(const Point& o, const Point& n, const std::vector<double>& ref_o,
                    const std::vector<double>& ref_n, const CompareOptions& opt,
                    PointComparison& c) {
  TimingEvidence e;
  c.change = n.step.summary.median / o.step.summary.median - 1.0;
  const auto mo = relative_medians(o.step, ref_o), mn = relative_medians(n.step, ref_n);
  e.change = c.judged_change = quantile(mn, 0.5) / quantile(mo, 0.5) - 1;
  weigh_noise(o, n, opt, e, c);
  e.rounds = true;
  test_medians(mo, mn, e, c);
  c.verdict = timing_verdict(e, opt);
  // Rounds of one run share its state: a move within the spread between identical runs is not
  // evidence, however small its p value.
  if ((c.verdict == Verdict::slower || c.verdict == Verdict::faster) &&
      std::fabs(e.change) <= opt.relative_allowance)
    c.verdict = Verdict::inconclusive;
  c.slowdown_regression = c.verdict == Verdict::slower && e.change > opt.threshold;
}

void judge_timing(const Point& o, const Point& n, const CompareOptions& opt,
                  std::optional<double> group_shift, PointComparison& c) {
  TimingEvidence e;
  e.change = c.change = n.step.summary.median / o.step.summary.median - 1.0;
  // The group moved as a whole: the point is judged on what it did beyond that move, which the
  // U test sees once NEW's round medians are taken back by it.
  const double unshift = group_shift ? 1 / (1 + *group_shift) : 1.0;
  if (group_shift) {
    c.against_group = true;
    c.group_shift = *group_shift;
    e.change = c.judged_change = (1 + c.change) * unshift - 1;
  }
  weigh_noise(o, n, opt, e, c);
  e.rounds = has_rounds(o, n);
  c.single_pass = !e.rounds;
  const auto mo = tested_medians(o.step, e.rounds);
  auto mn = tested_medians(n.step, e.rounds);
  for (double& m : mn) m *= unshift;
  test_medians(mo, mn, e, c);
  c.verdict = timing_verdict(e, opt);
  if (e.rounds)
    c.notes.push_back("round medians " + std::to_string(mo.size()) + " vs " +
                      std::to_string(mn.size()));
  else
    one_round_notes(e, opt, c);
  if (group_shift)
    c.notes.push_back("judged against its group's common move " +
                      format_percent(*group_shift, true) + " (" +
                      format_percent(c.judged_change, true) + " beyond it)");
  c.slowdown_regression = c.verdict == Verdict::slower && e.change > opt.threshold;
}

void judge_accuracy(const Point& o, const Point& n, const CompareOptions& opt,
                    const AccuracyTarget& target, PointComparison& c) {
  const Accuracy &a = o.accuracy, &b = n.accuracy;
  if (a.steps_scored == 0) return;
  if (b.steps_scored == 0) {
    c.notes.push_back("accuracy not scored in NEW");
    return;
  }
  // NaN compares false with everything, so a NaN in NEW is caught explicitly.
  const bool l2_worse =
      (std::isnan(b.rel_l2) && !std::isnan(a.rel_l2)) ||
      b.rel_l2 > a.rel_l2 * (1 + opt.rel_l2_rel_tolerance) + opt.rel_l2_abs_tolerance;
  if (l2_worse)
    c.accuracy_regressions.push_back("rel_l2 " + format_sci(a.rel_l2) + " -> " +
                                     format_sci(b.rel_l2));
  if ((std::isnan(b.mass_recall) && !std::isnan(a.mass_recall)) ||
      b.mass_recall < a.mass_recall - opt.mass_recall_tolerance)
    c.accuracy_regressions.push_back("mass_recall " + format_fixed(a.mass_recall, 4) + " -> " +
                                     format_fixed(b.mass_recall, 4));
  if (a.has_needle() && b.has_needle() &&
      b.needle_success_rate < a.needle_success_rate - opt.needle_tolerance)
    c.accuracy_regressions.push_back("needle success " + format_percent(a.needle_success_rate) +
                                     " -> " + format_percent(b.needle_success_rate));
  // Within the recall tolerance but across the target: the point no longer qualifies for
  // "fastest within target", which is what a reader of the report picks from.
  if (target.met_by(o) && !target.met_by(n)) {
    const bool cosine = target.metric == AccuracyTarget::Metric::cosine;
    c.accuracy_regressions.push_back("below --accuracy-target " + target.describe() + ": " +
                                     format_fixed(cosine ? a.cosine : a.mass_recall, 4) + " -> " +
                                     format_fixed(cosine ? b.cosine : b.mass_recall, 4));
  }
}

// "cpu reads of local-dram 1.00 MiB -> 1.05 MiB" for each figure of two traffics that differs.
void traffic_differences(const Traffic& a, const Traffic& b, std::vector<std::string>& out) {
  auto differs = [&](const std::string& what, double x, double y, bool bytes) {
    if (x == y) return;
    out.push_back("first-pass " + what + " " + (bytes ? format_bytes(x) : format_sci(x)) + " -> " +
                  (bytes ? format_bytes(y) : format_sci(y)) + " (" +
                  (x != 0 ? format_percent(y / x - 1, true) : std::string("was 0")) + ")");
  };
  for (auto p : {Processor::cpu, Processor::accelerator}) {
    const std::string who = processor_name(p);
    for (int ki = 0; ki < kMemoryKinds; ++ki) {
      const auto k = static_cast<MemoryKind>(ki);
      const std::string kind(memory_kind_name(k));
      differs(who + " reads of " + kind, static_cast<double>(a.bytes_read[int(p)][int(k)]),
              static_cast<double>(b.bytes_read[int(p)][int(k)]), true);
      differs(who + " writes to " + kind, static_cast<double>(a.bytes_written[int(p)][int(k)]),
              static_cast<double>(b.bytes_written[int(p)][int(k)]), true);
    }
    differs(who + " selected elements", a.select_elements[int(p)], b.select_elements[int(p)],
            false);
  }
  differs("host-to-accelerator bytes", static_cast<double>(a.h2d_bytes),
          static_cast<double>(b.h2d_bytes), true);
  differs("accelerator-to-host bytes", static_cast<double>(a.d2h_bytes),
          static_cast<double>(b.d2h_bytes), true);
  differs("weight bytes", static_cast<double>(a.weight_bytes), static_cast<double>(b.weight_bytes),
          true);
}

// Figures that do not drift with the machine, compared exactly: the first pass's traffic (the
// same decode positions in every run) and the tokens attended over the same scored steps.
// Points without it (a strategy whose choices follow its timings, a first pass a limit cut short,
// older reports) are not held to either.
void judge_behaviour(const Point& o, const Point& n, PointComparison& c) {
  if (!o.first_pass_traffic || !n.first_pass_traffic) return;
  traffic_differences(*o.first_pass_traffic, *n.first_pass_traffic, c.behaviour_changes);
  if (o.attended_tokens && n.attended_tokens &&
      o.accuracy.steps_scored == n.accuracy.steps_scored) {
    const AttendedTokens &a = *o.attended_tokens, &b = *n.attended_tokens;
    if (a.mean != b.mean || a.min != b.min || a.max != b.max)
      c.behaviour_changes.push_back(
          "attended tokens over the same " + std::to_string(o.accuracy.steps_scored) +
          " scored steps " + format_fixed(a.mean, 1) + " [" + std::to_string(a.min) + ", " +
          std::to_string(a.max) + "] -> " + format_fixed(b.mean, 1) + " [" + std::to_string(b.min) +
          ", " + std::to_string(b.max) + "]");
  }
}

PointComparison compare_point(const Point& o, const Point& n, const CompareOptions& opt,
                              const AccuracyTarget& target, std::optional<double> group_shift) {
  PointComparison c;
  c.axes = n.axes;
  c.old_status = o.status;
  c.new_status = n.status;
  c.old_provenance = o.provenance;
  c.new_provenance = n.provenance;
  c.old_step = o.step.summary;
  c.new_step = n.step.summary;
  c.old_accuracy = o.accuracy;
  c.new_accuracy = n.accuracy;
  if (o.provenance != n.provenance)
    c.notes.push_back(std::string("provenance ") + to_string(o.provenance) + " -> " +
                      to_string(n.provenance));
  const bool ot = o.timed() && o.step.summary.median > 0,
             nt = n.timed() && n.step.summary.median > 0;
  if (ot && nt) {
    judge_timing(o, n, opt, group_shift, c);
  } else if (ot) {
    c.verdict = Verdict::failed;
    c.notes.push_back("now " + std::string(to_string(n.status)) +
                      (n.reason.empty() ? "" : ": " + n.reason));
  } else if (nt) {
    c.verdict = Verdict::recovered;
    c.notes.push_back("was " + std::string(to_string(o.status)) +
                      (o.reason.empty() ? "" : ": " + o.reason));
  } else {
    c.verdict = Verdict::untimed;
    if (o.status != n.status)
      c.notes.push_back(std::string("status ") + to_string(o.status) + " -> " +
                        to_string(n.status));
  }
  if (o.status == PointStatus::ok && n.status == PointStatus::ok) {
    judge_accuracy(o, n, opt, target, c);
    judge_behaviour(o, n, c);
  }
  // Fleet runs split over ranks (--distribute points) may measure a point elsewhere next time.
  if (o.ran_on.known() && n.ran_on.known() && o.ran_on.host != n.ran_on.host)
    c.notes.push_back("ran on " + o.ran_on.host + ", now on " + n.ran_on.host);
  return c;
}

void context_warnings(const ReportContext& o, const ReportContext& n, std::vector<std::string>& w) {
  auto differs = [&](const char* what, const std::string& a, const std::string& b) {
    if (a != b) w.push_back(std::string(what) + " differs: \"" + a + "\" vs \"" + b + "\"");
  };
  differs("host", o.host, n.host);
  differs("CPU model", o.cpu_model, n.cpu_model);
  differs("accelerator", o.accelerator.kind_name() + " " + o.accelerator.name,
          n.accelerator.kind_name() + " " + n.accelerator.name);
  differs("build type", o.build_type, n.build_type);
  differs("SIMD level", o.simd_level, n.simd_level);
  // Fleet reports: the same host label on both sides should be the same hardware.
  for (const auto& ho : o.hosts)
    for (const auto& hn : n.hosts)
      if (ho.label == hn.label) {
        const std::string on = " on " + ho.label;
        differs(("CPU model" + on).c_str(), ho.cpu_model, hn.cpu_model);
        differs(("accelerator" + on).c_str(),
                ho.accelerator.kind_name() + " " + ho.accelerator.name,
                hn.accelerator.kind_name() + " " + hn.accelerator.name);
        if (ho.status != hn.status)
          w.push_back("rank status" + on + " differs: " + to_string(ho.status) + " vs " +
                      to_string(hn.status) + (hn.error.empty() ? "" : " (" + hn.error + ")"));
      }
  auto only = [&](const ReportContext& a, const ReportContext& b, const char* side) {
    for (const auto& h : a.hosts)
      if (std::none_of(b.hosts.begin(), b.hosts.end(),
                       [&](const HostRecord& x) { return x.label == h.label; }))
        w.push_back("host " + h.label + " (rank " + std::to_string(h.rank) + ") is only in " +
                    side);
  };
  only(o, n, "OLD");
  only(n, o, "NEW");
}

GeoMean geometric_mean(const std::vector<PointComparison>& points, const CompareOptions& opt) {
  GeoMean g;
  double sum_log = 0, sum_noise2 = 0;
  bool single_pass = false;
  for (const auto& p : points)
    if (is_timed(p.verdict) && p.old_step.median > 0 && p.new_step.median > 0) {
      sum_log += std::log(p.new_step.median / p.old_step.median);
      sum_noise2 += p.change_rel_noise * p.change_rel_noise;
      single_pass |= p.single_pass;
      ++g.n;
    }
  if (g.n == 0) {
    g.ratio = g.rel_noise = std::nan("");
    g.verdict = Verdict::untimed;
    return g;
  }
  const double mean_log = sum_log / g.n;
  g.ratio = std::exp(mean_log);
  g.rel_noise = std::sqrt(sum_noise2) / g.n;
  if (std::fabs(g.ratio - 1) < opt.min_effect)
    g.verdict = Verdict::same;
  else if (std::fabs(mean_log) > 2 * g.rel_noise)
    g.verdict = single_pass && std::fabs(g.ratio - 1) <= opt.drift_allowance ? Verdict::inconclusive
                : mean_log > 0                                               ? Verdict::slower
                                                                             : Verdict::faster;
  else
    g.verdict = Verdict::noisy;
  return g;
}

// "strategies only in OLD: a, b; only in NEW: c" when the two sweeps ran different strategy sets
// (their points are MISSING / NEW one by one; this says why in one line), else "".
std::string strategy_set_difference(const Report& old_report, const Report& new_report) {
  auto strategies = [](const Report& r) {
    std::set<std::string> s;
    for (const auto& p : r.points) s.insert(p.axes.strategy);
    return s;
  };
  const auto a = strategies(old_report), b = strategies(new_report);
  auto only = [](const std::set<std::string>& x, const std::set<std::string>& y,
                 const char* side) -> std::string {
    std::string names;
    for (const auto& s : x)
      if (!y.count(s)) names += (names.empty() ? "" : ", ") + s;
    return names.empty() ? "" : std::string("only in ") + side + ": " + names;
  };
  const std::string in_old = only(a, b, "OLD"), in_new = only(b, a, "NEW");
  if (in_old.empty() && in_new.empty()) return "";
  return "strategies " + in_old + (in_old.empty() || in_new.empty() ? "" : "; ") + in_new;
}

// NEW's command line with --repetitions 5 in place of any --repetitions it had.
std::string repeated_command(const std::string& command_line) {
  std::istringstream in(command_line);
  std::string word, out;
  bool skip_value = false;
  while (in >> word) {
    if (skip_value) {
      skip_value = false;
      continue;
    }
    if (word == "--repetitions") {
      skip_value = true;
      continue;
    }
    if (word.rfind("--repetitions=", 0) == 0) continue;
    out += (out.empty() ? "" : " ") + word;
  }
  if (out.empty()) out = "hybridbench run ...";
  return out + " --repetitions 5";
}

// "qwen2.5-0.5b 32k batch 1 moved +9.1% as a whole (11 strategies) ...": a move within
// --group-drift is what the machine does between runs, so it was set aside; beyond it, it is
// judged, and a uniform change smaller than it cannot be seen (said, so a CI owner can lower it).
std::string group_shift_sentence(const GroupShift& g, const CompareOptions& o) {
  const std::string what = g.axes.model + " " + format_tokens(g.axes.seq_len) + " batch " +
                           std::to_string(g.axes.batch) + " moved " +
                           format_percent(g.shift, true) + " as a whole (median of " +
                           std::to_string(g.points) + " strategies)";
  if (g.applied)
    return what + ": within --group-drift " + format_percent(o.group_drift) +
           ", as runs on one machine drift, so each strategy was judged against it; a change "
           "common to all strategies of that size is not caught (--group-drift 0 judges it)";
  return what + ": beyond --group-drift " + format_percent(o.group_drift) +
         ", so each strategy was judged on its own change";
}

// "the machine moved +15.0% at qwen2.5-0.5b 16k batch 1 (its control ...)": a move of the
// machine is said with its size and fails nothing; the strategies were judged relative to it.
std::string machine_move_sentence(const MachineMove& m, const CompareOptions& o) {
  const std::string what =
      "the machine moved " + format_percent(m.shift, true) + " at " + m.axes.model + " " +
      format_tokens(m.axes.seq_len) + " batch " + std::to_string(m.axes.batch) +
      " (its control, a stream read over the KV bytes in the same rounds), its " +
      std::to_string(m.points) + " strategies " + format_percent(m.group_shift, true) + " (median)";
  if (m.points < kMinGroupForShift)
    return what +
           ": too few strategies for a common move, so each was judged against the "
           "machine's move";
  if (m.with_group)
    return what + ": within --control-allowance " + format_percent(o.control_allowance) +
           " of each other, a move of the machine, which fails nothing; each strategy was judged "
           "against its group's move";
  return what + ": " + format_percent(m.beyond, true) + " beyond the machine, more than " +
         "--control-allowance " + format_percent(o.control_allowance) +
         ", so each strategy was judged against the machine's move";
}

// Everything that weakens the comparison without being a verdict: context differences, targets,
// interruptions, inconclusive and noisy points.
void add_warnings(const Report& old_report, const Report& new_report, const CompareOptions& options,
                  CompareResult& r) {
  context_warnings(old_report.context, new_report.context, r.warnings);
  if (auto d = strategy_set_difference(old_report, new_report); !d.empty())
    r.warnings.push_back(std::move(d));
  if (!options.accuracy_target &&
      report_accuracy_target(old_report).text() != report_accuracy_target(new_report).text())
    r.warnings.push_back("the runs used different accuracy targets (OLD " +
                         report_accuracy_target(old_report).describe() + ", NEW " +
                         r.target.describe() + "); NEW's is judged");
  // An interrupted run lacks points; its MISSING ones are the sweep's unfinished part.
  if (old_report.interruption.interrupted)
    r.warnings.push_back("OLD is an interrupted sweep (" + old_report.interruption.reason + ")");
  if (new_report.interruption.interrupted)
    r.warnings.push_back("NEW is an interrupted sweep (" + new_report.interruption.reason +
                         "); finish it with `hybridbench run ... --resume`");
  for (const auto& g : r.group_shifts)
    if (std::fabs(g.shift) >= options.min_effect &&
        std::none_of(r.machine_moves.begin(), r.machine_moves.end(),
                     [&](const MachineMove& m) { return m.group_key == g.group_key; }))
      r.warnings.push_back(group_shift_sentence(g, options));
  for (const auto& m : r.machine_moves)
    if (std::fabs(m.shift) >= kMachineMoveSaid || !m.with_group)
      r.warnings.push_back(machine_move_sentence(m, options));
  if (const int n = r.count(Verdict::inconclusive)) {
    r.deciding_command = repeated_command(new_report.context.command_line);
    r.warnings.push_back(
        std::to_string(n) +
        " point(s) INCONCLUSIVE: they changed beyond their noise, but with "
        "one round a side drift between runs can explain it. To decide, run OLD's and NEW's "
        "binaries with `" +
        r.deciding_command + "` (each with its own --out) and compare those reports");
  }
  const int noisy = static_cast<int>(
      std::count_if(r.points.begin(), r.points.end(), [](const auto& p) { return p.too_noisy; }));
  if (noisy > 0)
    r.warnings.push_back(
        std::to_string(noisy) + " of " + std::to_string(r.points.size()) +
        " points are noisier than --max-noise " + format_percent(options.max_noise) +
        " (IQR-based); was the machine busy? Re-run both on a quiet machine, or pin CPUs");
}

// Each group's common move between the runs: the median change of its points timed with rounds
// on both sides (a median, so one strategy's real change does not move it), for groups of at
// least kMinGroupForShift such points.
std::vector<GroupShift> group_shifts(const std::map<std::string, const Point*>& olds,
                                     const std::map<std::string, const Point*>& news,
                                     const CompareOptions& opt) {
  std::map<std::string, std::pair<const Point*, std::vector<double>>> logs;
  for (const auto& [key, o] : olds) {
    auto it = news.find(key);
    if (it == news.end() || !both_timed(*o, *it->second) || !has_rounds(*o, *it->second)) continue;
    auto& g = logs[o->axes.group_key()];
    g.first = it->second;
    g.second.push_back(std::log(it->second->step.summary.median / o->step.summary.median));
  }
  std::vector<GroupShift> shifts;
  for (auto& [key, g] : logs) {
    if (static_cast<int>(g.second.size()) < kMinGroupForShift) continue;
    GroupShift s;
    s.group_key = key;
    s.axes = g.first->axes;
    s.points = static_cast<int>(g.second.size());
    s.shift = std::exp(quantile(g.second, 0.5)) - 1;
    s.applied = opt.group_drift > 0 && std::fabs(s.shift) <= opt.group_drift;
    shifts.push_back(std::move(s));
  }
  return shifts;
}

// Round by round, the median over points of their (scaled) round medians (empty unless every
// point has as many rounds as the first).
std::vector<double> median_rounds(const std::vector<std::vector<double>>& each) {
  if (each.empty()) return {};
  std::vector<double> out;
  for (size_t r = 0; r < each[0].size(); ++r) {
    std::vector<double> v;
    for (const auto& e : each) {
      if (e.size() != each[0].size()) return {};
      v.push_back(e[r]);
    }
    out.push_back(quantile(v, 0.5));
  }
  return out;
}

// Each group's machine move: its control's change, from the points both sides timed with one
// (the points of a group share their rounds' control; the first such point's is the group's).
std::vector<MachineMove> machine_moves(const std::map<std::string, const Point*>& olds,
                                       const std::map<std::string, const Point*>& news) {
  std::map<std::string, MachineMove> moves;
  for (const auto& [key, o] : olds) {
    auto it = news.find(key);
    if (it == news.end() || !both_timed(*o, *it->second) || !has_control(*o, *it->second)) continue;
    MachineMove& m = moves[o->axes.group_key()];
    // On OLD's scale of each point, so the strategies weigh alike and NEW keeps its move.
    const double scale = o->step.summary.median;
    m.old_each.push_back(o->step.pass_medians());
    m.new_each.push_back(it->second->step.pass_medians());
    for (double& v : m.old_each.back()) v /= scale;
    for (double& v : m.new_each.back()) v /= scale;
    if (m.points++ > 0) continue;
    m.group_key = o->axes.group_key();
    m.axes = it->second->axes;
    m.shift = quantile(it->second->step.control_ns, 0.5) / quantile(o->step.control_ns, 0.5) - 1;
  }
  std::vector<MachineMove> out;
  for (auto& [key, m] : moves) {
    m.old_rounds = median_rounds(m.old_each);
    m.new_rounds = median_rounds(m.new_each);
    out.push_back(std::move(m));
  }
  return out;
}

std::optional<double> applied_shift(const std::vector<GroupShift>& shifts, const Point& p) {
  const std::string key = p.axes.group_key();
  for (const auto& s : shifts)
    if (s.group_key == key && s.applied) return s.shift;
  return std::nullopt;
}

// Groups with a machine control: the group's common move, where it is within
// --control-allowance of the control's (the machine moved, the strategies with it), else the
// control's move (the strategies moved beyond the machine: each is judged against the machine).
void weigh_against_control(std::vector<MachineMove>& moves, std::vector<GroupShift>& shifts,
                           const CompareOptions& opt) {
  for (auto& m : moves) {
    m.judged_shift = m.shift;
    m.with_group = false;
    for (auto& g : shifts)
      if (g.group_key == m.group_key) {
        m.group_shift = g.shift;
        m.beyond = (1 + g.shift) / (1 + m.shift) - 1;
        m.with_group = std::fabs(m.beyond) <= opt.control_allowance;
        if (m.with_group) m.judged_shift = g.shift;
        g.applied = false;  // the control decides, not --group-drift
      }
  }
}

// A point of a group with the machine control, judged again (its timing verdict) against its
// group's rounds when the group moved with the machine, else against the control's rounds.
void rejudge_against_control(const MachineMove& m, const Point& o, const Point& n,
                             const CompareOptions& opt, PointComparison& c) {
  if (!is_timed(c.verdict)) return;
  c.notes.clear();
  c.against_control = true;
  c.control_shift = m.shift;
  const bool group = m.with_group && m.old_rounds.size() == o.step.pass_sizes.size() &&
                     m.new_rounds.size() == n.step.pass_sizes.size();
  judge_relative(o, n, group ? m.old_rounds : o.step.control_ns,
                 group ? m.new_rounds : n.step.control_ns, opt, c);
  c.notes.push_back(std::string(group ? "judged over its group's median round"
                                      : "judged over the machine control") +
                    " in the same rounds (" + std::to_string(c.old_medians) + " vs " +
                    std::to_string(c.new_medians) + "): " + format_percent(c.judged_change, true) +
                    "; the control moved " + format_percent(m.shift, true));
}

const MachineMove* machine_move(const std::vector<MachineMove>& moves, const Point& p) {
  for (const auto& m : moves)
    if (m.group_key == p.axes.group_key()) return &m;
  return nullptr;
}

}  // namespace

CompareResult compare_reports(const Report& old_report, const Report& new_report,
                              const CompareOptions& options) {
  validate(options);
  CompareResult r;
  r.options = options;
  r.target =
      options.accuracy_target ? *options.accuracy_target : report_accuracy_target(new_report);
  const auto olds = index_points(old_report, "OLD"), news = index_points(new_report, "NEW");
  r.group_shifts = group_shifts(olds, news, options);
  r.machine_moves = machine_moves(olds, news);
  weigh_against_control(r.machine_moves, r.group_shifts, options);
  for (const auto& [key, o] : olds) {
    auto it = news.find(key);
    if (it == news.end()) {
      PointComparison c;
      c.axes = o->axes;
      c.verdict = Verdict::missing;
      c.old_status = o->status;
      c.old_step = o->step.summary;
      c.old_accuracy = o->accuracy;
      r.points.push_back(std::move(c));
    } else {
      const bool rounds = has_rounds(*o, *it->second);
      const MachineMove* m =
          has_control(*o, *it->second) ? machine_move(r.machine_moves, *o) : nullptr;
      const std::optional<double> shift =
          rounds && !m ? applied_shift(r.group_shifts, *o) : std::nullopt;
      r.points.push_back(compare_point(*o, *it->second, options, r.target, shift));
      if (m) rejudge_against_control(*m, *o, *it->second, options, r.points.back());
    }
  }
  for (const auto& [key, n] : news)
    if (!olds.count(key)) {
      PointComparison c;
      c.axes = n->axes;
      c.verdict = Verdict::added;
      c.new_status = n->status;
      c.new_step = n->step.summary;
      c.new_accuracy = n->accuracy;
      r.points.push_back(std::move(c));
    }
  std::sort(
      r.points.begin(), r.points.end(),
      [](const PointComparison& a, const PointComparison& b) { return axes_less(a.axes, b.axes); });
  // No pair at all: every verdict would be MISSING/NEW and the check would pass having judged
  // nothing, which a CI gate must not mistake for "no regression".
  const bool any_pair = std::any_of(r.points.begin(), r.points.end(), [](const PointComparison& p) {
    return p.verdict != Verdict::missing && p.verdict != Verdict::added;
  });
  if (!any_pair) {
    const char* empty = old_report.points.empty()   ? "OLD"
                        : new_report.points.empty() ? "NEW"
                                                    : nullptr;
    if (empty)
      throw Error(std::string("nothing to compare: the ") + empty + " report has no points",
                  "pass reports of sweeps that ran (`hybridbench run --out FILE.json`)");
    throw Error("nothing to compare: no point of NEW has the axes of a point of OLD (" +
                    std::to_string(old_report.points.size()) + " vs " +
                    std::to_string(new_report.points.size()) + " points; e.g. OLD " +
                    old_report.points[0].axes.key() + ", NEW " + new_report.points[0].axes.key() +
                    ")",
                "compare two runs of the same sweep (same models, lengths, batches, strategies, "
                "dtypes, workload, "
                "accelerator, --decode-steps and --page-tokens)");
  }
  for (const auto& p : r.points) r.regressions += p.regression();
  r.agreement = run_agreement(old_report, new_report, r.target);
  r.geomean = geometric_mean(r.points, options);
  add_warnings(old_report, new_report, options, r);
  return r;
}

}  // namespace hb::reports
