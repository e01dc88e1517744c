#include "cli/command.h"

namespace hb::cli {

CommandFn add_probe_command(CLI::App& app) {
  app.add_subcommand("probe", "Measure bandwidth and latency of each (CPU node, memory node) pair and the host link");
  return [] { return not_yet_available("probe"); };
}

}  // namespace hb::cli
