#pragma once
// Each subcommand lives in its own cli/cmd_*.cpp: it declares its options on a CLI11
// subcommand and returns the function main() calls when that subcommand was chosen. The
// function returns the process exit code (see core/error.h); errors are thrown as hb::Error.
#include <functional>
#include <string>

#include <CLI/CLI.hpp>

namespace hb::cli {

using CommandFn = std::function<int()>;

CommandFn add_topo_command(CLI::App& app);
CommandFn add_probe_command(CLI::App& app);
CommandFn add_run_command(CLI::App& app);
CommandFn add_compare_command(CLI::App& app);
CommandFn add_report_command(CLI::App& app);
CommandFn add_validate_model_command(CLI::App& app);

}  // namespace hb::cli
