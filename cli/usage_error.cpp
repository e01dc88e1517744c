#include "cli/usage_error.h"

#include <algorithm>
#include <sstream>

namespace hb::cli {

namespace {

// Edits (insert, delete, substitute, swap two neighbours) from a to b: "rnu" is one from "run".
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

// The subcommand CLI11 was parsing when it failed (the first one it met), else the app.
const CLI::App& parsing(const CLI::App& app) {
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    if (sub->parsed()) return *sub;
  return app;
}

std::string help_of(const CLI::App& app, const CLI::App& sub) {
  const std::string name = &sub == &app ? app.get_name() : app.get_name() + " " + sub.get_name();
  return "see `" + name + " --help`";
}

// Every long and short option name of `sub`, with its dashes ("--seq-len", "-q").
std::vector<std::string> option_names(const CLI::App& sub) {
  std::vector<std::string> names;
  for (const CLI::Option* o : sub.get_options()) {
    for (const auto& l : o->get_lnames()) names.push_back("--" + l);
    for (const auto& s : o->get_snames()) names.push_back("-" + s);
  }
  return names;
}

// "The following argument(s) was/were not expected: A B" -> the unknown options, each with its
// nearest known name.
Error extras_error(const std::string& what, const CLI::App& app, const CLI::App& sub) {
  std::istringstream words(what.substr(what.find(':') + 1));
  const std::vector<std::string> known = option_names(sub);
  std::string unknown, hints;
  for (std::string w; words >> w;) {
    unknown += (unknown.empty() ? "" : " ") + w;
    const std::string name = w.substr(0, w.find('='));
    if (name.rfind('-', 0) != 0) continue;
    if (const std::string near = nearest_name(name, known); !near.empty())
      hints += (hints.empty() ? "" : "; ") + std::string("did you mean ") + near + " (not " + name +
               ")?";
  }
  return Error("unexpected argument(s): " + unknown,
               (hints.empty() ? "" : hints + " ") + help_of(app, sub) + " for the options");
}

// A strict option's validator says "<problem> (fix: <fix>)" (numeric_options.cpp,
// sweep_options.h); CLI11 prefixes the option's name: "--batch: value '0' is out of range ...".
Error validation_error(const std::string& what, const CLI::App& app, const CLI::App& sub) {
  std::string problem = what, fix;
  const size_t at = what.rfind(" (fix: ");
  if (at != std::string::npos && what.back() == ')') {
    problem = what.substr(0, at);
    fix = what.substr(at + 7, what.size() - at - 8);
  }
  // "--batch: value '0'" reads better as "--batch '0'".
  if (const size_t colon = problem.find(": value '"); colon != std::string::npos)
    problem.replace(colon, 8, " ");
  return Error(problem, fix.empty() ? help_of(app, sub) : fix);
}

}  // namespace

std::string nearest_name(const std::string& typed, const std::vector<std::string>& known) {
  std::string best;
  size_t best_d = std::min<size_t>(3, std::max<size_t>(1, typed.size() / 3)) + 1;
  for (const auto& k : known)
    if (const size_t d = edit_distance(typed, k); d < best_d) best = k, best_d = d;
  if (!best.empty()) return best;
  // Not a typo but a part of the name ("--steps" for --decode-steps, "--noise" for --max-noise):
  // the one name that holds it as whole words.
  const std::string stem = typed.substr(typed.find_first_not_of('-'));
  if (stem.size() < 3) return "";
  for (const auto& k : known) {
    const size_t at = k.find(stem);
    if (at == std::string::npos || at < k.find_first_not_of('-')) continue;
    const bool starts = at == 0 || k[at - 1] == '-',
               ends = at + stem.size() == k.size() || k[at + stem.size()] == '-';
    if (!starts || !ends) continue;
    if (!best.empty() && best != k) return "";  // two candidates: no guess
    best = k;
  }
  return best;
}

void refuse_empty_values(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    refuse_empty_values(*sub);
    for (CLI::Option* o : sub->get_options([](const CLI::Option* o) {
           return o->get_items_expected_max() > 0;  // not a flag
         })) {
      const std::string name = o->get_name();
      o->check(CLI::Validator(
          [name](std::string& v) -> std::string {
            if (!v.empty()) return {};
            return "the value is empty (fix: give " + name +
                   " a value, or leave it out for its default)";
          },
          ""));
    }
  }
}

Error usage_error(const CLI::ParseError& e, const CLI::App& app) {
  const CLI::App& sub = parsing(app);
  const std::string what = e.what();
  if (dynamic_cast<const CLI::ExtrasError*>(&e)) return extras_error(what, app, sub);
  if (dynamic_cast<const CLI::ValidationError*>(&e)) return validation_error(what, app, sub);
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) && what.find("At Most") != std::string::npos)
    return Error(what.substr(0, what.find(':')) +
                     " is given more than once, or with more than one "
                     "value (" +
                     what + ")",
                 "give it once, with one value; lists are comma separated (--seq-len 4k,16k)");
  if (&sub == &app && dynamic_cast<const CLI::RequiredError*>(&e)) {
    std::string names;
    std::vector<std::string> known;
    for (const CLI::App* c : app.get_subcommands([](const CLI::App*) { return true; })) {
      names += (names.empty() ? "" : ", ") + c->get_name();
      known.push_back(c->get_name());
    }
    // The word given where the subcommand goes, if any ("rnu"): its nearest subcommand.
    std::string near;
    for (const std::string& w : app.remaining())
      if (w.rfind('-', 0) != 0) {
        near = nearest_name(w, known);
        break;
      }
    return Error("no subcommand given (or an unknown one)",
                 (near.empty() ? "" : "did you mean " + near + "? ") + "give one of: " + names +
                     " (" + help_of(app, sub) + ")");
  }
  return Error(what, help_of(app, sub));
}

}  // namespace hb::cli
