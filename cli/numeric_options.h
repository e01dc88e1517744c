#pragma once
// Numeric options declared once with their strict parser (core/parse.h): the value is checked
// (whole text, finite, in range, units understood) while CLI11 parses, and rewritten to its exact
// number so CLI11's own conversion only stores it. A bad value is a CLI11 validation error, which
// main() turns into exit 2 with the option's name, the bad text and the fix. The same happens to
// a value from `run --config` (cmd_run.cpp feeds it through the same option).
#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "core/parse.h"

namespace hb::cli {

// Ranges of options several subcommands share.
inline constexpr int64_t kMinAcceleratorBytes = int64_t{1} << 20;  // --accelerator-memory: 1 MiB
inline constexpr int kMaxDeviceIndex = 1023;                       // --device (CUDA device index)
inline constexpr int kMaxNodeId = (1 << 16) - 1;                   // --cpu-node, NUMA node numbers

// Integer in [min, max]; `note` (optional) is added to the fix, e.g. why max is what it is.
CLI::Option* add_integer_option(CLI::App& app, const std::string& name, int& target,
                                const std::string& description, int64_t min, int64_t max,
                                const std::string& note = {});
CLI::Option* add_integer_option(CLI::App& app, const std::string& name, uint64_t& target,
                                const std::string& description);  // every uint64_t (seeds)
// Finite real number in `range`.
CLI::Option* add_real_option(CLI::App& app, const std::string& name, double& target,
                             const std::string& description, const parse::RealRange& range);
// A percentage, nvbench-style: "5" and "5%" both mean 5%; `target` receives the fraction (0.05).
// `range` is in percent. The help shows the default in percent.
CLI::Option* add_percent_option(CLI::App& app, const std::string& name, double& target_fraction,
                                const std::string& description, const parse::RealRange& range);
// Seconds: "30", "500ms", "2min", "1h", checked against `range` (in seconds).
CLI::Option* add_seconds_option(CLI::App& app, const std::string& name, double& target,
                                const std::string& description, const parse::RealRange& range);
// Bytes: "512M", "2G", "1.5GiB", at least `min_bytes`.
CLI::Option* add_size_option(CLI::App& app, const std::string& name, int64_t& target,
                             const std::string& description, int64_t min_bytes);

// --accuracy-target METRIC:X (reports/accuracy_target.h): recall:0.9, cosine:0.99 or a bare
// number (recall); stored as its canonical text. Anything else is a usage error (exit 2).
CLI::Option* add_accuracy_target_option(CLI::App& app, std::string& target);

// Threads a process may usefully start: the CPUs it may run on (sched_getaffinity). More
// threads than that only time-slice, and a typo like 200000 would exhaust the machine's pids.
int max_threads_option();
std::string max_threads_note();

}  // namespace hb::cli
