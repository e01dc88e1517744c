#pragma once
// The uncertainty a modeled figure carries: what `validate-model --published` gives per kind of
// figure (its |error| against the GPUs' published measurements), recorded here because
// projecting the rows takes minutes on a small machine, too long for every model run.
// tests/model/published_projection_test.cpp projects the rows afresh and fails when these
// drift from it: record them again then (the numbers it prints).
#include <span>
#include <string>

#include "model/published_projection.h"

namespace hb::model {

struct RecordedPublishedErrors {
  const char* figure;  // "itl" or "tokens_per_s": the report's ModelUncertainty::figure
  PublishedMetric metric;
  int rows;  // rows not excluded; a row that did not run counts |error| 1
  double median_abs_error, max_abs_error;
  const char* publications;
};
std::span<const RecordedPublishedErrors> recorded_published_errors();
// When and on which commit they were recorded.
inline constexpr const char* kPublishedErrorsRecorded = "2026-12-07, main after tp49";

// The rows, median and largest |error| of `v`'s rows of one metric (not excluded).
struct MetricErrors {
  int rows = 0;
  double median_abs_error = 0, max_abs_error = 0;
};
MetricErrors metric_errors(const PublishedValidation& v, PublishedMetric metric);

}  // namespace hb::model
