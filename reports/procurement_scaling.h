#pragma once
// The procurement view's figures of one candidate (reports/procurement_view.h): its ranked
// figures from the point's whole-model block, and what the report says beyond its own context
// and batch: its longest context with the ITL and cost there, and the largest batch under the
// ITL SLO. Between a candidate's points the ITL is taken as linear in the context (the KV read
// grows with it; the weights and the work outside the layers do not) and linear in the batch
// (each sequence adds its own KV and activations to the same weight stream), extended past the
// last point with the last segment's slope; the texts say so.
#include <utility>
#include <vector>

#include "reports/procurement_view.h"

namespace hb::reports {

// Batches a capacity search gives up at (bench::kMaxBatch; model/capacity.cpp checks they agree).
inline constexpr int kMaxBatchSearched = 4096;

// y at x on the polyline through `pts` (two or more, any order of x): linear between the
// neighbours of x, beyond the ends along the end segment.
double piecewise_linear(std::vector<std::pair<double, double>> pts, double x);

// tokens/s, ITL, $/Mtok and tokens/s/W from p.whole_model (timed, present): each figure's rounds
// from the point's round medians, its noise the step's (scaled by the layers' share of the ITL).
void whole_model_figures(const Point& p, Candidate& c);

// The max-context figure (capacity row `fit`, null: blank with the reason) and the ITL and cost
// there, from `family`: the candidate's points (same report, platform and strategy).
void context_figures(const Point& p, const std::vector<const Point*>& family,
                     const CapacityRow* fit, ProcurementEntry& e);

// The largest batch at p's context that the memory (capacity row `fit`) holds and, with an SLO,
// whose ITL stays under it, with the ITL, tokens/s and cost there.
void batch_figures(const Point& p, const std::vector<const Point*>& family, const CapacityRow* fit,
                   const ProcurementOptions& o, ProcurementEntry& e);

}  // namespace hb::reports
