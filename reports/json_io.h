#pragma once
// Reports on disk. Writing goes through reports/output_file.h: atomic for regular files (a crash
// or Ctrl-C leaves the old file or the complete new one), through symlinks, in place for devices
// and FIFOs, "-" for standard output.
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

// Writes `report` to `path` with write_output; throws hb::Error (kExitFailure) on I/O failure.
void write_report(const std::string& path, const Report& report);
// Reads and validates; throws hb::Error (kExitUsage) naming the path and the problem.
Report read_report(const std::string& path);

}  // namespace hb::reports
