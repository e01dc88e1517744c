#pragma once
// Whether two runs tell a reader the same thing: the headline (who is fastest within the
// accuracy target, or which strategies tie) at every length, and each speedup against the other
// run's interval. compare's point verdicts say whether anything got slower; this says whether
// the answer a run exists to give was reproduced (issue 33's check, now a command).
#include <cstdint>
#include <string>
#include <vector>

#include "reports/accuracy_target.h"
#include "reports/report.h"

namespace hb::reports {

// One column of one setting (procurement_tables): the leaders each run names there
// (ProcurementTable::leaders within the target, each run at its own --tie-margin).
struct HeadlineColumn {
  std::string setting;  // the table's title; several settings: which one
  int64_t seq_len = 0;
  std::string host;                                       // fleet replicate columns; "" otherwise
  std::vector<std::string> old_leaders, new_leaders;      // the winner first, then its ties
  std::vector<std::string> old_at_margin, new_at_margin;  // ProcurementTable::at_margin
  // The same winner, or the same tie set (order aside); neither naming anyone counts as same.
  bool same() const;
  // Not the same, but every strategy named by one run only is, in the other, at the margin: the
  // runs differ only on a membership neither could settle.
  bool same_but_margin() const;
};

// Speedups both runs paired (same group, same two strategies, rounds on both sides), counted
// once per unordered pair (b over a is a over b's reciprocal, with the reciprocal interval).
struct SpeedupAgreement {
  int pairs = 0;
  // Each run's ratio inside the other run's interval. A calibrated 95% interval holds another
  // run's estimate ~83% of the time (the difference of two estimates has sqrt(2) their SD).
  int inside_both = 0;
  // The difference of the two log ratios within the two half-widths added in quadrature: the
  // test of "these two estimates agree" at about the intervals' own level (95%).
  int consistent = 0;
  // Decided in both runs (Speedup::decided at each run's tie margin) and in opposite directions.
  int opposite = 0;
  std::vector<std::string> opposite_names;  // "16k: h2o vs quest", for the text
};

struct RunAgreement {
  std::vector<HeadlineColumn> headline;  // columns present in both runs, table then length order
  SpeedupAgreement speedups;
  // Columns whose headline changed beyond what the margin explains (neither same() nor
  // same_but_margin()), and those same but for the margin.
  int headline_changes() const;
  int margin_moves() const;
};

// `target` judges both runs (compare's judged target), so a changed --accuracy-target does not
// pass for a changed headline.
RunAgreement run_agreement(const Report& old_report, const Report& new_report,
                           const AccuracyTarget& target);

// "same at 4k, 16k, 32k", or the columns that changed, "changed at 4k (tie h2o, quest -> h2o)",
// those that moved only at the margin, "same but for the margin at 4k (tie h2o, quest -> h2o
// (quest at the margin))", then "same at ..."; "" when no column is in both runs.
std::string headline_agreement_text(const RunAgreement& a);
// "163 of 176 inside the other run's interval both ways, 170 consistent, none decided opposite
// ways"; "" when no speedup is paired in both.
std::string speedup_agreement_text(const SpeedupAgreement& s);

}  // namespace hb::reports
