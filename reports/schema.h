#pragma once
// The JSON form of a Report (schema "hybridbench.report/1", documented field by field in
// reports/README.md). The one place that maps struct fields to JSON names; internal to reports/.
#include <string>

#include <nlohmann/json.hpp>

#include "reports/report.h"

namespace hb::reports {

// Throws hb::Error when the report breaks the vocabularies (a runner bug, caught before a file
// that no reader would accept is written).
nlohmann::ordered_json report_to_json(const Report& report);
// Validates while converting; errors name `source` and the JSON path.
Report report_from_json(const nlohmann::ordered_json& j, const std::string& source);

}  // namespace hb::reports
