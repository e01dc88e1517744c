// hybridbench: benchmark and profile long-context decode attention when the KV cache
// outgrows GPU memory. main() only wires subcommands; each lives in cli/cmd_*.cpp.
#include <cstdio>
#include <iostream>
#include <new>
#include <utility>
#include <vector>

#include "cli/command.h"
#include "cli/fleet_comm.h"
#include "cli/help_format.h"
#include "cli/usage_error.h"
#include "core/build_info.h"
#include "core/cpu_features.h"
#include "core/error.h"
#include "kernels/backend.h"

namespace {

std::string version_text() {
  const auto& b = hb::build_info();
  std::string why;
  const bool gpu = hb::cuda_available(&why);
  std::string s = "hybridbench " + b.version + "\n";
  s += "  git commit:  " + b.git_commit + "\n";
  s += "  build type:  " + b.build_type + " (" + b.compiler + ")\n";
  s += "  CUDA:        " + std::string(b.cuda ? "on (toolkit " + b.cuda_version + ")" : "off") +
       "\n";
  s += "  GPU:         " + std::string(gpu ? "usable" : "none (" + why + ")") + "\n";
  s += "  MPI:         " +
       std::string(hb::cli::mpi_built() ? "on (run --distribute under mpirun/srun)"
                                        : "off (MPI mode unavailable: built without MPI)") +
       "\n";
  s += "  SIMD (run time): " + std::string(hb::simd_level_name(hb::best_simd_level())) + "\n";
  return s;
}

// The one error style (cli/README.md): the problem, a fix, the error's exit status.
int print_error(const hb::Error& e) {
  std::cerr << "hybridbench: error: " << e.problem() << "\n";
  if (!e.fix().empty()) std::cerr << "  fix: " << e.fix() << "\n";
  return e.exit_code();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "hybridbench: what does long-context decode attention cost on this machine's memory "
      "hierarchy\n"
      "(GPU HBM, local/remote DRAM, CXL) under each KV-cache strategy, and how accurate is "
      "each?\n\n"
      "Typical use:\n"
      "  hybridbench topo                       # what memory this node has, classified into "
      "tiers\n"
      "  hybridbench probe                      # measure bandwidth/latency of each tier\n"
      "  hybridbench run                        # default sweep -> hybridbench-<time>.json\n"
      "  hybridbench report run.json --html r.html   # tables and charts\n"
      "  hybridbench compare old.json new.json  # CI regression check (exit 3 on regression)\n",
      "hybridbench"};
  app.set_version_flag("--version", version_text);
  // Set before the subcommands are added: each inherits the flag and the formatter.
  app.set_help_all_flag("--help-all", "Every option with its full description, then exit");
  hb::cli::use_clean_help(app);
  app.require_subcommand(1);
  app.fallthrough();

  std::vector<std::pair<CLI::App*, hb::cli::CommandFn>> commands;
  auto add = [&](hb::cli::CommandFn (*adder)(CLI::App&)) {
    const size_t before = app.get_subcommands({}).size();
    auto fn = adder(app);
    commands.emplace_back(app.get_subcommands({})[before], std::move(fn));
  };
  add(hb::cli::add_topo_command);
  add(hb::cli::add_probe_command);
  add(hb::cli::add_run_command);
  add(hb::cli::add_compare_command);
  add(hb::cli::add_report_command);
  add(hb::cli::add_validate_model_command);
  hb::cli::refuse_empty_values(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; bad usage is said like every other input error, with the
    // usage code (CLI11's own codes, 100+, would mean nothing to scripts).
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
    return print_error(hb::cli::usage_error(e, app));
  }
  try {
    for (auto& [sub, fn] : commands)
      if (sub->parsed()) return fn();
  } catch (const hb::Error& e) {
    return print_error(e);
  } catch (const std::bad_alloc&) {  // a memory limit (ulimit -v, a cgroup), not a bug
    return print_error(hb::Error("out of memory: an allocation was refused",
                                 "raise the memory limit (ulimit -v, the cgroup's memory.max) or "
                                 "run a smaller sweep (--seq-len, --batch, fewer threads)",
                                 hb::kExitFailure));
  } catch (const std::exception& e) {
    std::cerr << "hybridbench: internal error: " << e.what() << "\n";
    return hb::kExitFailure;
  }
  return hb::kExitUsage;
}
