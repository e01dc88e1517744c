#include "reports/run_agreement.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "reports/format.h"
#include "reports/tables.h"

namespace hb::reports {

namespace {

using SpeedupKey = std::tuple<std::string, std::string, std::string>;  // group, a, b

// The report's paired speedups with a < b by name: one entry per unordered pair.
std::map<SpeedupKey, const Speedup*> paired_by_key(const Report& r) {
  std::map<SpeedupKey, const Speedup*> out;
  for (const auto& s : r.speedups)
    if (s.paired() && s.strategy_a < s.strategy_b && s.ratio > 0 && s.ci_low > 0)
      out[{s.group_key, s.strategy_a, s.strategy_b}] = &s;
  return out;
}

bool inside(double ratio, const Speedup& s) { return ratio >= s.ci_low && ratio <= s.ci_high; }

double log_half_width(const Speedup& s) { return 0.5 * std::log(s.ci_high / s.ci_low); }

// "16k: h2o vs quest": the group's length, which is what a reader of one setting looks up.
std::string pair_name(const Speedup& s, const Report& r) {
  for (const auto& p : r.points)
    if (p.axes.group_key() == s.group_key)
      return format_tokens(p.axes.seq_len) + ": " + s.strategy_a + " vs " + s.strategy_b;
  return s.strategy_a + " vs " + s.strategy_b;
}

SpeedupAgreement speedup_agreement(const Report& old_report, const Report& new_report) {
  SpeedupAgreement a;
  const auto olds = paired_by_key(old_report), news = paired_by_key(new_report);
  const double old_margin = tie_margin(old_report.context);
  const double new_margin = tie_margin(new_report.context);
  for (const auto& [key, o] : olds) {
    const auto it = news.find(key);
    if (it == news.end()) continue;
    const Speedup& n = *it->second;
    ++a.pairs;
    a.inside_both += inside(o->ratio, n) && inside(n.ratio, *o);
    const double gap = std::fabs(std::log(o->ratio / n.ratio));
    a.consistent += gap <= std::hypot(log_half_width(*o), log_half_width(n));
    if (o->decided(old_margin) && n.decided(new_margin) && (o->ratio > 1) != (n.ratio > 1)) {
      ++a.opposite;
      a.opposite_names.push_back(pair_name(n, new_report));
    }
  }
  return a;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// Every strategy one run leads with is, in the other run, a leader too or at the margin.
bool covered_by_margin(const std::vector<std::string>& here_leaders,
                       const std::vector<std::string>& there_leaders,
                       const std::vector<std::string>& there_at_margin) {
  return std::all_of(here_leaders.begin(), here_leaders.end(), [&](const std::string& s) {
    return contains(there_leaders, s) || contains(there_at_margin, s);
  });
}

}  // namespace

bool HeadlineColumn::same() const {
  std::vector<std::string> a = old_leaders, b = new_leaders;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b;
}

bool HeadlineColumn::same_but_margin() const {
  return !same() && covered_by_margin(old_leaders, new_leaders, new_at_margin) &&
         covered_by_margin(new_leaders, old_leaders, old_at_margin);
}

int RunAgreement::headline_changes() const {
  return static_cast<int>(std::count_if(headline.begin(), headline.end(), [](const auto& c) {
    return !c.same() && !c.same_but_margin();
  }));
}

int RunAgreement::margin_moves() const {
  return static_cast<int>(std::count_if(headline.begin(), headline.end(),
                                        [](const auto& c) { return c.same_but_margin(); }));
}

RunAgreement run_agreement(const Report& old_report, const Report& new_report,
                           const AccuracyTarget& target) {
  RunAgreement a;
  std::vector<ProcurementTable> olds = procurement_tables(old_report);
  std::vector<ProcurementTable> news = procurement_tables(new_report);
  for (auto& o : olds) {
    auto n = std::find_if(news.begin(), news.end(), [&](const ProcurementTable& t) {
      return t.setting_key == o.setting_key;
    });
    if (n == news.end()) continue;
    o.target = n->target = target;
    const auto new_columns = n->columns();
    for (const auto& [len, host] : o.columns()) {
      if (std::find(new_columns.begin(), new_columns.end(), std::pair(len, host)) ==
          new_columns.end())
        continue;
      a.headline.push_back({o.title, len, host, o.leaders(len, host), n->leaders(len, host),
                            o.at_margin(len, host), n->at_margin(len, host)});
    }
  }
  a.speedups = speedup_agreement(old_report, new_report);
  return a;
}

std::string headline_agreement_text(const RunAgreement& a) {
  if (a.headline.empty()) return "";
  bool several = false;
  for (const auto& c : a.headline) several |= c.setting != a.headline.front().setting;
  auto column = [&](const HeadlineColumn& c) {
    return (several ? c.setting + " " : "") + format_tokens(c.seq_len) +
           (c.host.empty() ? "" : " @ " + c.host);
  };
  auto change = [&](const HeadlineColumn& c) {
    return column(c) + " (" + leaders_text(c.old_leaders, c.old_at_margin) + " -> " +
           leaders_text(c.new_leaders, c.new_at_margin) + ")";
  };
  std::vector<std::string> changed, margin, same;
  for (const auto& c : a.headline)
    if (c.same())
      same.push_back(column(c));
    else
      (c.same_but_margin() ? margin : changed).push_back(change(c));
  std::vector<std::string> parts;
  if (!changed.empty()) parts.push_back("changed at " + format_list(changed));
  if (!margin.empty()) parts.push_back("same but for the margin at " + format_list(margin));
  if (!same.empty()) parts.push_back("same at " + format_list(same));
  return format_list(parts, "; ");
}

std::string speedup_agreement_text(const SpeedupAgreement& s) {
  if (s.pairs == 0) return "";
  std::string t = std::to_string(s.inside_both) + " of " + std::to_string(s.pairs) +
                  " inside the other run's interval both ways, " + std::to_string(s.consistent) +
                  " within the two intervals combined; ";
  if (s.opposite == 0) return t + "none decided opposite ways";
  t += std::to_string(s.opposite) + " decided opposite ways (";
  return t + format_list(s.opposite_names) + ")";
}

}  // namespace hb::reports
