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

// One point, exactly as in the report's "points" array: the sweep journal (bench/
// journal.h) stores finished points this way, so a resumed sweep reports them unchanged.
nlohmann::ordered_json point_to_json(const Point& point);
// `path` is the JSON path in error messages (e.g. "line 3: $.point").
Point point_from_json(const nlohmann::ordered_json& j, const std::string& source,
                      const std::string& path);

class JsonReader;  // reports/json_checked.h
// A point's "whole_model" block (reports/whole_model_json.cpp); reading checks it with
// whole_model_problem (reports/whole_model.h) for the point's batch.
nlohmann::ordered_json whole_model_json(const WholeModel& w);
WholeModel read_whole_model(const JsonReader& r, int batch);

}  // namespace hb::reports
