#pragma once
// Strategies that lost most of what the exact attention holds: a point whose attended tokens
// carry under half of the exact softmax mass, or that retrieved the planted needle in under
// half of its trials. Its output then follows another distribution than the model's, whatever
// its speed, so the summary and `run`'s stderr say so by name instead of leaving a 3% recall
// to be noticed in a table (issue 33, item 10).
#include <string>
#include <vector>

#include "reports/report.h"

namespace hb::reports {

// A point loses "most" below this share (mass recall, needle success rate).
inline constexpr double kLostMostBelow = 0.5;

// One line per strategy that lost most somewhere, in report order: "streamingllm: attention-mass
// recall 3.1% at 16k, 2.0% at 32k; needle retrieved in 0.0% of trials at 16k".
std::vector<std::string> accuracy_loss_lines(const Report& r);

// The summary's sentence: "Warning: 1 strategy lost most of the exact attention (...): <line>;
// <line>." Empty when none did.
std::string accuracy_loss_sentence(const Report& r);

}  // namespace hb::reports
