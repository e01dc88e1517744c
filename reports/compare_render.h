#pragma once
// compare's outputs: the aligned table cli prints, and a machine-readable JSON of the verdicts.
#include <string>

#include "reports/compare.h"

namespace hb::reports {

// Aligned table (one row per point), then warnings, the counts and compare_verdict_line.
std::string compare_table_text(const CompareResult& r);

// The one line a CI log needs, by r.outcome(): "REGRESSION: 2 point(s) marked '!'", "UNJUDGED:
// 7 of 21 timed points not judged: 5 NOISY, 2 INCONCLUSIVE (--fail-unjudged)" or "OK: no
// regression" (each with the unjudged count in parentheses when there are any). No newline.
std::string compare_verdict_line(const CompareResult& r);

// GitHub-flavoured markdown to paste into a pull request: a heading with the outcome, one
// table row per matched point (strategy, point, base, new, delta ± noise, verdict, accuracy
// delta: mass recall and cosine), a geometric-mean row (GeoMean, its verdict rule stated under
// the table), MISSING / NEW points as counts with their names in a collapsed <details>, then the
// warnings.
std::string compare_markdown_text(const CompareResult& r);

// Accuracy beside time: "recall 99.0% -> 97.5% (-1.5 pt), cosine 0.9990 -> 0.9987"; only the
// figures both sides scored; "" when neither side has any.
std::string accuracy_delta_text(const PointComparison& p);

// JSON ("schema": "hybridbench.compare/1"): options, summary counts, warnings and one entry per
// point with verdict, medians (_ns), change, p-value and reasons.
std::string compare_json_text(const CompareResult& r, const std::string& old_source,
                              const std::string& new_source);

}  // namespace hb::reports
