#include "reports/text_table.h"

#include <algorithm>

namespace hb::reports {

size_t display_width(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;  // count lead bytes, not continuations
  return n;
}

static std::string escape_markdown(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

void TextTable::add_column(std::string header, Align align) {
  headers_.push_back(std::move(header));
  aligns_.push_back(align);
}

void TextTable::add_row(std::vector<std::string> cells) {
  cells.resize(headers_.size());
  rows_.push_back(std::move(cells));
}

std::vector<size_t> TextTable::widths(bool markdown) const {
  std::vector<size_t> w(headers_.size(), markdown ? 3 : 0);  // markdown needs "---" at least
  auto fit = [&](const std::vector<std::string>& cells) {
    for (size_t c = 0; c < cells.size(); ++c)
      w[c] = std::max(w[c], display_width(markdown ? escape_markdown(cells[c]) : cells[c]));
  };
  fit(headers_);
  for (const auto& r : rows_) fit(r);
  return w;
}

static std::string pad(const std::string& s, size_t width, TextTable::Align a) {
  const size_t n = display_width(s);
  const std::string fill(width > n ? width - n : 0, ' ');
  return a == TextTable::Align::right ? fill + s : s + fill;
}

std::string TextTable::plain() const {
  const auto w = widths(false);
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s;
    for (size_t c = 0; c < cells.size(); ++c)
      s += (c ? "  " : "") + pad(cells[c], w[c], aligns_[c]);
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s + "\n";
  };
  std::string out = line(headers_);
  std::vector<std::string> rule;
  for (size_t c = 0; c < w.size(); ++c) rule.push_back(std::string(w[c], '-'));
  out += line(rule);
  for (const auto& r : rows_) out += line(r);
  return out;
}

std::string TextTable::markdown() const {
  const auto w = widths(true);
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s = "|";
    for (size_t c = 0; c < cells.size(); ++c)
      s += " " + pad(escape_markdown(cells[c]), w[c], aligns_[c]) + " |";
    return s + "\n";
  };
  std::string out = line(headers_);
  std::string rule = "|";
  for (size_t c = 0; c < w.size(); ++c)
    rule +=
        " " +
        (aligns_[c] == Align::right ? std::string(w[c] - 1, '-') + ":" : std::string(w[c], '-')) +
        " |";
  out += rule + "\n";
  for (const auto& r : rows_) out += line(r);
  return out;
}

std::string TextTable::html() const {
  auto cell = [&](const char* tag, size_t c, const std::string& text) {
    const bool right = aligns_[c] == Align::right;
    return std::string("<") + tag + (right ? " class=\"num\"" : "") + ">" + html_escape(text) +
           "</" + tag + ">";
  };
  std::string out = "<table>\n<thead><tr>";
  for (size_t c = 0; c < headers_.size(); ++c) out += cell("th", c, headers_[c]);
  out += "</tr></thead>\n<tbody>\n";
  for (const auto& r : rows_) {
    out += "<tr>";
    for (size_t c = 0; c < r.size(); ++c) out += cell("td", c, r[c]);
    out += "</tr>\n";
  }
  return out + "</tbody>\n</table>\n";
}

}  // namespace hb::reports
