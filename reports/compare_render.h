#pragma once
// compare's outputs: the aligned table cli prints, and a machine-readable JSON of the verdicts.
#include <string>

#include "reports/compare.h"

namespace hb::reports {

// Aligned table (one row per point), then warnings and a one-line summary ending in
// "REGRESSION" or "OK".
std::string compare_table_text(const CompareResult& r);

// JSON ("schema": "hybridbench.compare/1"): options, summary counts, warnings and one entry per
// point with verdict, medians (_ns), change, p-value and reasons.
std::string compare_json_text(const CompareResult& r, const std::string& old_source,
                              const std::string& new_source);

}  // namespace hb::reports
