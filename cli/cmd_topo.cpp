#include "cli/command.h"

namespace hb::cli {

CommandFn add_topo_command(CLI::App& app) {
  app.add_subcommand("topo", "Discover this node's memory topology and classify each memory node into a tier");
  return [] { return not_yet_available("topo"); };
}

}  // namespace hb::cli
