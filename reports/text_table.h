#pragma once
// A table of text cells rendered with aligned columns, either plain (terminal) or as a GitHub
// markdown pipe table. Cells are plain strings; the caller formats numbers (reports/format.h).
#include <string>
#include <vector>

namespace hb::reports {

class TextTable {
 public:
  enum class Align { left, right };
  void add_column(std::string header, Align align = Align::left);
  void add_row(std::vector<std::string> cells);  // missing trailing cells are blank
  size_t rows() const { return rows_.size(); }

  std::string plain() const;     // space-separated, header underlined with dashes
  std::string markdown() const;  // | a | b |, alignment row, '|' in cells escaped
  std::string html() const;      // <table> with <th>/<td>, text HTML-escaped

 private:
  std::vector<size_t> widths(bool markdown) const;
  std::vector<std::string> headers_;
  std::vector<Align> aligns_;
  std::vector<std::vector<std::string>> rows_;
};

// Text safe inside HTML/SVG elements and attribute values (& < > " ').
std::string html_escape(const std::string& s);

// Display width of UTF-8 text (code points; every character we emit is one column wide).
size_t display_width(const std::string& s);

}  // namespace hb::reports
