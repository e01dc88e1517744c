#include "cli/help_format.h"

#include <algorithm>
#include <memory>
#include <set>
#include <sstream>

#include "core/error.h"

namespace hb::cli {

namespace {

constexpr size_t kWidth = 100;     // wrap here
constexpr size_t kLeftWidth = 30;  // "  --accelerator-memory SIZE  "

// `text` wrapped at kWidth, each line after the first indented to kLeftWidth; paragraphs ("\n")
// kept.
std::string wrapped(const std::string& text, size_t column) {
  std::string out;
  std::istringstream paragraphs(text);
  for (std::string para; std::getline(paragraphs, para);) {
    if (!out.empty()) out += "\n" + std::string(kLeftWidth, ' '), column = kLeftWidth;
    std::istringstream words(para);
    bool first = true;
    for (std::string w; words >> w; first = false) {
      if (!first && column + 1 + w.size() > kWidth) {
        out += "\n" + std::string(kLeftWidth, ' ');
        column = kLeftWidth;
      } else if (!first) {
        out += ' ', ++column;
      }
      out += w, column += w.size();
    }
  }
  return out;
}

// The option's line(s): name and placeholder on the left, `text` (and the default) wrapped right.
std::string option_lines(const CLI::Option& o, std::string text) {
  std::string left = "  " + o.get_name(false, true);
  if (const std::string p = option_placeholder(o); !p.empty()) left += " " + p;
  const std::string def = o.get_default_str();
  if (!def.empty() && o.get_expected_min() > 0 && o.get_type_size() != 0 && def != "[]")
    text += (text.empty() ? "" : " ") + std::string("(default ") + def + ")";
  if (left.size() + 2 > kLeftWidth)
    return left + "\n" + std::string(kLeftWidth, ' ') + wrapped(text, kLeftWidth) + "\n";
  return left + std::string(kLeftWidth - left.size(), ' ') + wrapped(text, kLeftWidth) + "\n";
}

class CleanHelp : public CLI::Formatter {
 public:
  // The subcommand's groups in the order --help lists them; none: every option, CLI11's order.
  explicit CleanHelp(std::vector<HelpGroup> groups = {}) : groups_(std::move(groups)) {}

  std::string make_option(const CLI::Option* o, bool positional) const override {
    if (positional) return CLI::Formatter::make_option(o, positional);
    return option_lines(*o, o->get_description());
  }

  // A subcommand in its parent's list: the first line of its description (run's has examples).
  std::string make_subcommand(const CLI::App* sub) const override {
    const std::string d = sub->get_description();
    std::string left = "  " + sub->get_name();
    left.resize(std::max(left.size() + 2, kLeftWidth), ' ');
    return left + d.substr(0, d.find('\n')) + "\n";
  }

  // Normal: the entries with a brief, and how many more --help-all has; All: every entry in full.
  std::string make_help(const CLI::App* app, std::string name,
                        CLI::AppFormatMode mode) const override {
    if (groups_.empty() || mode == CLI::AppFormatMode::Sub)
      return CLI::Formatter::make_help(app, std::move(name), mode);
    const bool all = mode == CLI::AppFormatMode::All;
    std::string out = make_description(app) + make_usage(app, name) + make_positionals(app);
    size_t more = 0;
    for (const HelpGroup& g : groups_) {
      std::string lines;
      for (const HelpEntry& e : g.entries) {
        const CLI::Option* o = app->get_option_no_throw(e.name);
        if (all)
          lines += option_lines(*o, o->get_description());
        else if (e.brief.empty())
          ++more;
        else
          lines += option_lines(*o, e.brief);
      }
      if (!lines.empty()) out += "\n" + g.title + ":\n" + lines;
    }
    if (all) return out + "\n" + make_footer(app);
    return out + "\n" + std::to_string(more) +
           " more options, with full descriptions: " + app->get_parent()->get_name() + " " +
           app->get_name() + " --help-all\n";
  }

 private:
  std::vector<HelpGroup> groups_;
};

// The word that says what kind of value a type or validator description wants.
std::string placeholder_of(const std::string& word) {
  if (word.rfind("INT", 0) == 0 || word.rfind("UINT", 0) == 0) return "N";
  if (word == "PERCENT") return "PCT";
  if (word == "FLOAT" || word == "NUMBER") return "X";
  return word;
}

}  // namespace

std::string option_placeholder(const CLI::Option& o) {
  if (o.get_type_size() == 0) return "";  // a flag
  if (!o.get_option_text().empty()) {
    const std::string t = o.get_option_text();
    return t.substr(t.find_first_not_of(' '));
  }
  std::string t = o.get_type_name();  // "FLOAT:PERCENT 0 < x <= 100", "TEXT:layer|attention"
  if (const size_t colon = t.find(':'); colon != std::string::npos) t = t.substr(colon + 1);
  std::string word = t.substr(0, t.find(' '));
  if (word.rfind("METRIC", 0) == 0) return word;  // METRIC:X
  word = word.substr(0, word.find(':'));
  std::string p = placeholder_of(word);
  if (o.get_expected_max() > 1) p += " ...";
  return p;
}

void use_clean_help(CLI::App& app) { app.formatter(std::make_shared<CleanHelp>()); }

void use_help_groups(CLI::App& sub, const std::vector<HelpGroup>& groups) {
  std::set<const CLI::Option*> grouped;
  for (const auto& g : groups)
    for (const auto& e : g.entries) {
      CLI::Option* o = sub.get_option_no_throw(e.name);
      if (!o)
        throw Error("internal: " + sub.get_name() + " has no option " + e.name + " for --help", {},
                    kExitFailure);
      o->group(g.title);
      grouped.insert(o);
    }
  for (const CLI::Option* o : sub.get_options())
    if (o->nonpositional() && !grouped.count(o))
      throw Error("internal: " + sub.get_name() + " option " + o->get_name(false, true) +
                      " is in no --help group",
                  {}, kExitFailure);
  sub.formatter(std::make_shared<CleanHelp>(groups));
}

}  // namespace hb::cli
