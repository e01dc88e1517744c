#include "model/published_errors.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace hb::model {

std::span<const RecordedPublishedErrors> recorded_published_errors() {
  static constexpr RecordedPublishedErrors kRecorded[] = {
      {"itl", PublishedMetric::ms_per_token, 7, 0.014105, 0.05087,
       "Quest ICML'24, NVIDIA NIM Llama-3.3-70B on 2xH100 (TP2)"},
      {"tokens_per_s", PublishedMetric::tokens_per_s, 5, 0.00541, 0.013303,
       "ShadowKV ICML'25, FlexGen ICML'23"},
  };
  return kRecorded;
}

MetricErrors metric_errors(const PublishedValidation& v, PublishedMetric metric) {
  std::vector<double> errors;
  for (const auto& p : v.rows)
    if (p.row.metric == metric && p.row.excluded.empty()) errors.push_back(std::fabs(p.error));
  MetricErrors e;
  e.rows = static_cast<int>(errors.size());
  if (errors.empty()) return e;
  std::sort(errors.begin(), errors.end());
  const size_t n = errors.size();
  e.median_abs_error = n % 2 ? errors[n / 2] : (errors[n / 2 - 1] + errors[n / 2]) / 2;
  e.max_abs_error = errors.back();
  return e;
}

}  // namespace hb::model
