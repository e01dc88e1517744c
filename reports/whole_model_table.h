#pragma once
// The whole-model section of a procurement table (Point::whole_model): per strategy and column,
// the inter-token latency, tokens/s (the accelerator's and per user), $ per million tokens and
// tokens/s per W. A blank figure shows "-" with a letter, and the letters' reasons (which value
// is missing and how to give it) are listed under the table. Markdown, HTML and the terminal
// render the same model.
#include <string>
#include <vector>

#include "reports/tables.h"
#include "reports/text_table.h"

namespace hb::reports {

struct WholeModelSection {
  std::string heading;               // "Whole model: 80 layers (ITL = 80 x step + ...)"
  TextTable table;                   // one row per point with a block
  std::vector<std::string> reasons;  // "(a) no price for platform ...", in letter order
  bool empty() const { return table.rows() == 0; }
};

// Empty (no rows) when none of the table's points carries a block (older reports, scope
// attention, traces).
WholeModelSection whole_model_section(const ProcurementTable& t);

// Cell texts: "96.9 ms", "82.6", "$41.60", "0.0712"; shared with the CSV's column order.
std::string money_cell(double usd);
std::string rate_cell(double per_s);

}  // namespace hb::reports
