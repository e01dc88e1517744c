#pragma once
// Reports on disk. Writing is atomic (temporary file in the same directory, fsync, rename), so
// a crash or Ctrl-C leaves either the old file or the complete new one, never half of one.
// Reading validates against the schema (reports/README.md) and throws hb::Error naming the
// file, the JSON path of the first problem and how to fix it.
#include <string>

#include "reports/report.h"

namespace hb::reports {

// Serialised report text (pretty-printed JSON, trailing newline). Throws hb::Error when the
// report breaks the schema's vocabularies (unknown status, provenance or stop reason).
std::string to_json_text(const Report& report);
// Parses and validates; `source` names the origin in error messages (usually the path).
Report from_json_text(const std::string& text, const std::string& source);

// Writes `report` to `path` atomically; throws hb::Error (kExitFailure) on I/O failure.
void write_report(const std::string& path, const Report& report);
// Reads and validates; throws hb::Error (kExitUsage) naming the path and the problem.
Report read_report(const std::string& path);

// Writes any text file atomically (used for tables, HTML and exporter output as well).
void write_file_atomic(const std::string& path, const std::string& text);

}  // namespace hb::reports
