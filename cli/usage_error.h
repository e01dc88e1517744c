#pragma once
// CLI11's parse errors in the one error style every failure uses (core/error.h): the problem,
// then a fix, exit 2. CLI11 says "value '0' is out of range" or "At Most 1 required but
// received 2" and stops; here an unknown option gets the nearest known name, an option given
// twice is named, and the rest point at the subcommand's --help.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/error.h"

namespace hb::cli {

// The hb::Error (exit 2) for a CLI11 parse error that is not --help or --version. `app` is
// the top-level app; the subcommand being parsed is found from it.
Error usage_error(const CLI::ParseError& e, const CLI::App& app);

// Every option of every subcommand of `app` that takes a value refuses an empty one: no option
// means anything by "" (`--out ''` wrote the report to standard output, `--platform ''` ...), so
// it is a slip of quoting or an unset shell variable, exit 2 naming the option.
void refuse_empty_values(CLI::App& app);

// The name in `known` closest to `typed` by edit distance (at most a third of the name's length,
// and at most 3 edits: a likely typo); else the one name holding `typed` as whole words
// ("--noise" -> "--max-noise"); else "" (none, or two such names).
std::string nearest_name(const std::string& typed, const std::vector<std::string>& known);

}  // namespace hb::cli
