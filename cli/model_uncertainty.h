#pragma once
// What a model-mode report records about its own figures (issue 49 item 5): their uncertainty,
// the |error| of `validate-model --published`'s rows per kind of figure, and each platform's
// price, power and bandwidth as its profile gives them, with sources and dates. Computed here
// from model/'s API and handed to reports/ as data (reports/ knows no model/).
#include <functional>
#include <string>
#include <vector>

#include "model/platform_model.h"
#include "model/published_projection.h"
#include "reports/report.h"

namespace hb::cli {

// Per kind of figure ("itl", "tokens_per_s"): the largest |error| of `validate-model
// --published`'s rows of that kind as the ± printed, the median beside it and the rows named as
// its source (recorded from that command: model_uncertainty.cpp says when, a test that they hold).
std::vector<reports::ModelUncertainty> model_uncertainty();

// The published validation as `validate-model --published` runs it (the shipped rows, each
// projected with model mode on its preset, executed on this machine).
// `progress` is told each row's label before it runs.
model::PublishedValidation published_validation(
    const std::function<void(const std::string&)>& progress = {});

// Price per hour (or purchase price and years), GPUs per node, GPU / CPU / DRAM / CXL power,
// HBM bandwidth and the host link's, per platform, each with its profile's source and date.
std::vector<reports::PlatformAssumption> platform_assumptions(
    const std::vector<model::PlatformModel>& platforms);

}  // namespace hb::cli
