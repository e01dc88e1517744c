#pragma once
// The report's "capacity" array (reports/capacity.h) as JSON: written by the schema's writer
// when a report has rows, read back with every field checked. Internal to reports/ (nlohmann
// types, like schema.h).
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/capacity.h"
#include "reports/json_checked.h"

namespace hb::reports {

nlohmann::ordered_json capacity_json(const std::vector<CapacityRow>& rows);
// Throws hb::Error naming the file and JSON path of a row out of its ranges.
std::vector<CapacityRow> read_capacity(const JsonReader& array);

}  // namespace hb::reports
