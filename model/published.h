#pragma once
// The published measurements (model/published/measurements.json): decode timings papers report
// on GPUs, each row with its publication and figure, the hardware as a platform preset, the model
// as a model preset of the same shape, lengths, batch, element type, metric and how the value was
// read. What model mode's projections are checked against.
#include <map>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "model/tensor_parallel.h"

namespace hb::model {

// transfer_share: the share of a decode step spent moving data over the link (a paper's latency
// breakdown), as a fraction.
enum class PublishedMetric { ms_per_token, tokens_per_s, transfer_share };
enum class PublishedReading { printed, plot };  // a printed number, or one read off a plot

struct PublishedRow {
  std::string publication, where;              // the paper, and its table or figure
  std::string platform;                        // a platform preset (model/profiles/)
  std::string model;                           // a model preset (core/model_presets.h)
  std::string system;                          // what the paper ran, in its words
  std::string strategy;                        // the strategy that stands for it here
  std::map<std::string, std::string> options;  // its --opt pairs (quest.budget=2048)
  int64_t seq_len = 0;                         // the context (with gen_len: the prompt)
  int batch = 0;
  // Tokens generated per sequence when the published throughput counts the prompt's prefill
  // and the whole generation (FlexGen's "generation throughput"); 0 = one decode step.
  int gen_len = 0;
  // Why the model cannot stand for what the paper ran (e.g. weights offloaded, which no
  // strategy here does); "" = it can. Such a row is projected and printed, not held to the goal.
  std::string excluded;
  DType dtype = DType::f16;
  // The deployment the row measured (model/tensor_parallel.h): GPUs per replica and the element
  // types model mode prices weights and KV at (fp8 rows: `weights_dtype`, `kv_dtype`).
  int tp = 1;
  PricedDtype weights = PricedDtype::fp16, kv = PricedDtype::fp16;
  PublishedMetric metric = PublishedMetric::ms_per_token;
  double value = 0;
  PublishedReading read = PublishedReading::printed;
  std::string notes;  // model_note, read_note, length_note joined: what the row assumes
};

// Parses the table's text; `origin` names it in every error (hb::Error, exit 2, with the JSON
// path). Every row's platform must be a shipped preset and its model a model preset.
std::vector<PublishedRow> parse_published_measurements(const std::string& text,
                                                       const std::string& origin);

}  // namespace hb::model
