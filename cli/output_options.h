#pragma once
// `--json` means one thing in every subcommand: `--json FILE` writes the command's
// machine-readable result to FILE, `-` (or a bare `--json`, the older flag spelling) to
// standard output, where the human text then moves to stderr. Where the command already names
// that result `--out` (run's report, probe's platform profile, validate-model's validation),
// `--json` is a second name for it; giving both with different paths is refused.
#include <string>

#include <CLI/CLI.hpp>

namespace hb::cli {

// Declares --json on `app` into `target`; `what` names the result ("the report").
CLI::Option* add_json_option(CLI::App& app, std::string& target, const std::string& what);

// The one path of a result reachable as --out and --json: whichever was given, or "" for
// neither. Throws hb::Error (usage, exit 2) when both name different paths.
std::string out_or_json(const std::string& out, const std::string& json);

}  // namespace hb::cli
