#pragma once
// `run --help`'s groups (sweep, measurement, machine, model mode, fleet, output) and the options
// it shows, one line each; `run --help-all` has every option in the same groups in full.
#include <CLI/CLI.hpp>

namespace hb::cli {

// Call after every option of `run` is declared (cli/help_format.h, use_help_groups).
void group_run_help(CLI::App& run);

}  // namespace hb::cli
