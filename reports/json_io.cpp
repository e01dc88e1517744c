#include "reports/json_io.h"

#include "core/error.h"
#include "core/input_file.h"
#include "core/json_text.h"
#include "reports/json_error_path.h"
#include "reports/output_file.h"
#include "reports/schema.h"

namespace hb::reports {

std::string to_json_text(const Report& report) {
  return report_to_json(report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
         "\n";
}

namespace {

// Why `text` is not JSON, with the JSON path of the value where it stops being JSON.
[[noreturn]] void refuse_unparsable(const std::string& text, const std::string& source) {
  const JsonParseFailure f = locate_parse_failure(text);
  const std::string where = source + ": " + f.path + ": ";
  if (is_non_finite_token(f.token))
    throw Error(where + f.token + " is not a finite number (JSON has no NaN or infinity)",
                "a figure must be a finite number; hybridbench writes null where one is "
                "undefined: regenerate the report with `hybridbench run`, or correct the field "
                "at " +
                    f.path);
  if (f.overflow)
    throw Error(where + "the number " + f.token + " is beyond the range of a double",
                "the file was edited or damaged; correct the field at " + f.path +
                    ", or pass a report written by `hybridbench run`");
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    throw Error(source + ": not valid JSON: the file is empty",
                "pass a report written by `hybridbench run --out FILE.json`");
  if (f.byte >= text.size())
    throw Error(where + "not valid JSON: the file ends too early, after " +
                    std::to_string(text.size()) + " bytes (truncated?)",
                "the file was cut short (copied while being written, disk full, or an "
                "interrupted transfer); hybridbench writes reports atomically, so re-copy it "
                "or re-run the sweep");
  throw Error(where + "not valid JSON at byte " + std::to_string(f.byte) + " of " +
                  std::to_string(text.size()) + (f.token.empty() ? "" : " ('" + f.token + "')"),
              "the file is damaged or not JSON; pass a report written by `hybridbench run`");
}

}  // namespace

Report from_json_text(const std::string& text, const std::string& source) {
  nlohmann::ordered_json j;
  try {
    j = parse_json_text<nlohmann::ordered_json>(text);
  } catch (const JsonDuplicateKey& e) {
    throw Error(source + ": " + e.what(),
                "the file was edited or merged by hand; keep one of the two members, or pass a "
                "report written by `hybridbench run`");
  } catch (const nlohmann::json::exception&) {
    refuse_unparsable(text, source);
  }
  return report_from_json(j, source);
}

void write_report(const std::string& path, const Report& report) {
  write_output(path, to_json_text(report));
}

Report read_report(const std::string& path) {
  return from_json_text(read_input_file(path, {"report", kMaxReportBytes,
                                               "reports are written by `hybridbench run --out "
                                               "FILE.json`"}),
                        path);
}

}  // namespace hb::reports
