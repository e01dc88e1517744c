#include "cli/command.h"

namespace hb::cli {

CommandFn add_compare_command(CLI::App& app) {
  app.add_subcommand("compare", "Compare two reports point by point (CI regression check)");
  return [] { return not_yet_available("compare"); };
}

}  // namespace hb::cli
