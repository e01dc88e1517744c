#pragma once
// The sentences a report opens with (issue 19): what the run found, computed from the data, so a
// reader learns the answer before the metadata and the tables. One function computes them; the
// markdown report, the HTML page and `run`'s stdout summary only render them.
#include <string>
#include <vector>

#include "reports/report.h"
#include "reports/tables.h"

namespace hb::reports {

// Three to five sentences, in this order:
//  1. what the figures are (measured, emulated or modeled: a model-mode report says it is not
//     a measurement), and which points are too noisy to judge (reports/convergence), or that
//     every point settled;
//  2. per setting, for each length, the fastest strategy within the accuracy target and its
//     speedup over the reference (full-gpu by default) and over the best baseline that also
//     meets the target, named; lengths with the same winner share a sentence; "no strategy
//     meets" where none does; a reference that did not run there (oom) is said, and the
//     winner is then compared with the best baseline only;
//  3. where the KV cache stops fitting the accelerator (kv_boundary_line), or where the
//     reference ran out of memory when the report does not carry kv_fit_fraction.
// A report without points gets one sentence saying so.
std::vector<std::string> summary_sentences(const Report& report, const TableOptions& options = {});

// A ratio whose distance from 1 is within twice its relative noise (a and b in quadrature, as in
// Speedup::rel_noise): |ln ratio| <= 2 rel_noise. The summary says "within noise" and the HTML
// speedup chart hatches such bars.
bool within_noise(double ratio, double rel_noise);

// The strategies the system under test is compared with: those whose points carry the baseline
// role (Point::role, from the strategy registry), other than the table's reference (which may be
// a baseline chosen with --reference).
bool is_baseline(const ProcurementTable& t, const std::string& strategy);

// The fastest baseline (is_baseline) of a column that meets the table's accuracy target, other
// than `excluding` (the winner it is compared with); "" when none does.
std::string best_baseline(const ProcurementTable& t, int64_t seq_len, const std::string& host,
                          const std::string& excluding);

// Where the accelerator's KV budget came from, per model (the run's
// accelerator_kv_budget_bytes.* facts, or --accelerator-memory): "KV budget: 32.2 MiB of KV per
// layer for llama-3.1-8b (emulated accelerator: twice the KV of the sweep's smallest point),
// ...". "" when the report does not say.
std::string kv_budget_sentence(const Report& r);

}  // namespace hb::reports
