#pragma once
// --help that fits a screen (issue 49). Every subcommand's options print with a short
// placeholder (N, PCT, SECONDS, LIST, layer|attention) instead of CLI11's type and validator text
// ("FLOAT:PERCENT 0 < x <= 100=5"), their descriptions wrapped, the default as "(default X)".
// A subcommand that names its everyday options (use_help_groups) shows only those in --help,
// one line each under its group's title, and every option with its full description in
// --help-all.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace hb::cli {

// One option of a help group: its name as declared ("--seq-len", "--help"), and the one line
// --help shows for it; "" = --help-all only.
struct HelpEntry {
  std::string name;
  std::string brief;
};

struct HelpGroup {
  std::string title;  // "Sweep", "Measurement", ...
  std::vector<HelpEntry> entries;
};

// The formatter every subcommand inherits (set on the top-level app before its subcommands are
// added): clean placeholders and wrapped descriptions, all options in --help.
void use_clean_help(CLI::App& app);

// Puts each option of `sub` into its group (CLI11 option groups, in this order) and gives `sub`
// a --help of the entries with a brief only, ending in how many more --help-all shows. Throws
// hb::Error (a bug) for a name `sub` does not have or an option left out of every group.
void use_help_groups(CLI::App& sub, const std::vector<HelpGroup>& groups);

// The placeholder an option's value prints as: its option_text, else its type and validators
// boiled down ("INT:1..100000" -> "N", "FLOAT:PERCENT 0 < x <= 100" -> "PCT"); "" for a flag.
std::string option_placeholder(const CLI::Option& o);

}  // namespace hb::cli
