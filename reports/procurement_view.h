#pragma once
// The procurement view's data (issue 34 item 4): per setting (model, KV dtype, workload,
// context, batch, budget), one candidate per (platform, strategy) with its whole-model figures
// (Point::whole_model), its capacity (Report::capacity) and whether it may be ranked. Works on
// one report (model mode over presets: a platform per profile; a replicate fleet: a platform per
// host; a measured run: its host) or several read together (a measured node beside projected
// ones): a point's platform is axes.extra["platform"], else its host label, else the host its
// report ran on. The markdown and the chart render this; the ranking is procurement_rank.h.
#include <optional>
#include <string>
#include <vector>

#include "reports/accuracy_target.h"
#include "reports/procurement_rank.h"
#include "reports/report.h"

namespace hb::reports {

struct ProcurementOptions {
  // --itl-slo: the largest batch whose ITL stays under it is reported per candidate; nullopt:
  // only the memory's limit on the batch.
  std::optional<double> itl_slo_ns;
  // The markdown's table shows this many platforms per strategy and counts what it leaves out
  // (what was not ranked, blank columns); 0 = every row and line (report --full).
  int top_per_strategy = 0;
};

// What the view says about one candidate besides the ranked figures.
struct ProcurementEntry {
  Candidate candidate;
  std::string accuracy;  // "recall 0.93", or the status
  bool meets_target = false;
  bool fits = true;  // its memory holds its context at its batch (or the report cannot say)
  // At the longest context (figure max_context): its ITL and $/Mtok there ("ITL 310 ms,
  // $2.100/Mtok"; "" when unknown), how they were had or why not ("extrapolated from 32k-128k"),
  // and what binds it (CapacityRow::limit up to its reason: "accelerator", "local-dram + cxl",
  // "weights"; "" when unbounded or unknown).
  std::string at_max_context, max_context_note, max_context_bound;
  // The largest batch at this context that its memory holds and (with an SLO) whose ITL stays
  // under it, ITL linear in the batch between this candidate's points at the same context; its
  // ITL, tokens/s and $/Mtok there ("" when unknown) and what binds it or why it is blank.
  Figure slo_batch;
  std::string at_slo_batch, slo_note;
};

struct ProcurementSetting {
  std::string title;  // "llama-3.1-70b, fp16, 128k tokens, batch 8"
  std::string model, kv_dtype, kv_budget;
  int64_t seq_len = 0;
  int batch = 1;
  std::vector<ProcurementEntry> entries;  // strategy, then platform, by name
  std::vector<std::string> platforms;     // every platform of the setting, by name
  std::vector<std::string> provenances;   // of the entries' figures, sorted
  std::string target;                     // "recall >= 0.9"
  // Modeled figures' uncertainty per kind (ReportContext::model_uncertainty of the first report
  // that has it); empty when no report says.
  std::vector<ModelUncertainty> model_uncertainty;
  // The candidates alone, for the ranking functions.
  std::vector<Candidate> candidates() const;
};

// Settings in reading order (model, dtype, batch, context). Ablations (Point::role) are left
// out: they isolate a mechanism of the system under study, they are not deployments.
std::vector<ProcurementSetting> procurement_settings(const std::vector<const Report*>& reports,
                                                     const ProcurementOptions& options = {});

// Distinct platforms of a report's points (the labels above); the view is there by default when
// a report has more than one.
std::vector<std::string> report_platforms(const Report& report);

}  // namespace hb::reports
