#include "cli/command.h"

namespace hb::cli {

CommandFn add_report_command(CLI::App& app) {
  app.add_subcommand("report", "Turn a JSON report into markdown/CSV tables and an HTML page");
  return [] { return not_yet_available("report"); };
}

}  // namespace hb::cli
