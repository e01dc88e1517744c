#include "reports/point_warnings.h"

#include "reports/format.h"

namespace hb::reports {

std::vector<std::string> point_warning_lines(const Report& r) {
  std::vector<std::string> lines;
  for (const auto& p : r.points)
    for (const auto& w : p.warnings)
      lines.push_back(p.axes.strategy + ", seq_len " + format_tokens(p.axes.seq_len) + ", batch " +
                      std::to_string(p.axes.batch) + ": " + w);
  return lines;
}

namespace {

std::string header(size_t n) {
  return std::to_string(n) +
         " point warning(s): a strategy ran without what its method needs and used a stand-in "
         "(named in its strategy_params), so its accuracy is the stand-in's";
}

}  // namespace

std::string point_warnings_sentence(const Report& r) {
  const std::vector<std::string> lines = point_warning_lines(r);
  if (lines.empty()) return "";
  std::string list;
  for (const auto& l : lines) list += (list.empty() ? "" : "; ") + l;
  return "Warning: " + header(lines.size()) + ": " + list + ".";
}

std::string point_warnings_text(const Report& r) {
  const std::vector<std::string> lines = point_warning_lines(r);
  if (lines.empty()) return "";
  std::string text = "warning: " + header(lines.size()) + ":\n";
  for (const auto& l : lines) text += "  " + l + "\n";
  return text;
}

}  // namespace hb::reports
