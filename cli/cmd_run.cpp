#include "cli/command.h"

namespace hb::cli {

CommandFn add_run_command(CLI::App& app) {
  app.add_subcommand("run", "Sweep KV-cache strategies over models and sequence lengths; write a JSON report");
  return [] { return not_yet_available("run"); };
}

}  // namespace hb::cli
