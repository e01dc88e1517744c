#pragma once
// `hybridbench validate-model --published`: model mode checked against GPUs. Every row of the
// published-measurements table (model/published.h) is projected as `run --mode model` would
// project it (its platform preset, model, length, batch, element type, strategy and options),
// and the whole-model figure is put beside the published value: error = (projected -
// published) / published, in the row's metric.
#include <string>
#include <vector>

#include "bench/run_environment.h"
#include "bench/runner.h"
#include "model/platform_model.h"
#include "model/published.h"

namespace hb::model {

struct PublishedProjection {
  PublishedRow row;
  std::string status = "ok";  // the projected point's status (ok, oom, ...)
  std::string reason;         // why it is not ok
  double projected = 0;       // in the row's metric; 0 when not ok
  double error = 0;           // (projected - value) / value; a point that is not ok counts 1
};

struct PublishedValidation {
  std::vector<PublishedProjection> rows;
  double median_abs_error = 0, max_abs_error = 0;  // over the rows not excluded
};

// What the shipped rows must meet (model/published/README.md): the median |error| and the
// largest one.
inline constexpr double kPublishedMedianGoal = 0.10, kPublishedMaxGoal = 0.25;

// The table compiled into the binary (model/published/measurements.json).
const std::string& embedded_published_measurements();

// Projects each row on its platform preset. `env`: the machine model mode runs on (as `run`'s);
// `progress` is told each row's label before it runs.
PublishedValidation project_published(const std::vector<PublishedRow>& rows,
                                      const bench::RunEnvironment& env,
                                      const std::function<void(const std::string&)>& progress = {});

// A prefill of `batch` prompts of `prompt` tokens: its GEMM and causal-attention flops at the
// platform's prefill_tflops, or its weights read once where that is longer. Throws hb::Error
// when the platform has no prefill_tflops.
double prefill_ns(const PlatformModel& m, const ModelPreset& model, int batch, int64_t prompt);

// The sweep one row is projected with (exposed for tests).
bench::SweepSpec published_row_sweep(const PublishedRow& row);

bool published_goal_met(const PublishedValidation& v);
// Aligned text: one line per row, then the median and largest |error| against the goal.
std::string published_text(const PublishedValidation& v);
// JSON ("hybridbench.published-validation/1"): rows with projection and error, the summary.
std::string published_json(const PublishedValidation& v);

}  // namespace hb::model
