#include "reports/json_io.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "reports/output_file.h"
#include "reports/schema.h"

namespace hb::reports {

std::string to_json_text(const Report& report) {
  return report_to_json(report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
         "\n";
}

Report from_json_text(const std::string& text, const std::string& source) {
  nlohmann::ordered_json j;
  try {
    j = nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    const bool truncated = e.byte >= text.size();
    throw Error(
        source + ": not valid JSON" +
            (truncated
                 ? " (the file ends too early, after " + std::to_string(text.size()) +
                       " bytes: truncated?)"
                 : " at byte " + std::to_string(e.byte) + " of " + std::to_string(text.size())),
        truncated
            ? "the file was cut short (copied while being written, disk full, or an interrupted "
              "transfer); hybridbench writes reports atomically, so re-copy it or re-run the sweep"
            : "the file is damaged or not JSON; pass a report written by `hybridbench run`");
  } catch (const nlohmann::json::exception& e) {
    // Well-formed JSON the parser still refuses, e.g. a number such as 1e999 beyond double.
    throw Error(source + ": not a readable report (" + e.what() + ")",
                "the file was edited or damaged; pass a report written by `hybridbench run`");
  }
  return report_from_json(j, source);
}

static std::string errno_text() { return std::strerror(errno); }

void write_report(const std::string& path, const Report& report) {
  write_output(path, to_json_text(report));
}

Report read_report(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error("cannot open report " + path + ": " + errno_text(),
                "check the path; reports are written by `hybridbench run --out FILE.json`");
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad())
    throw Error("cannot read report " + path + ": " + errno_text(), "check the file", kExitFailure);
  return from_json_text(ss.str(), path);
}

}  // namespace hb::reports
