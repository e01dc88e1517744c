#include "cli/output_options.h"

#include "core/error.h"

namespace hb::cli {

CLI::Option* add_json_option(CLI::App& app, std::string& target, const std::string& what) {
  // expected(0, 1): a bare --json (how probe and topo spelled "print JSON" before) takes the
  // default string, "-", so old scripts keep working and mean what `--json -` means.
  return app
      .add_option("--json", target,
                  "Write " + what +
                      " as JSON to FILE (- or a bare --json = stdout; the human text "
                      "then goes to stderr)")
      ->expected(0, 1)
      ->default_str("-")
      ->option_text("[FILE]");  // not "FILE=-": "-" is what a bare --json means, no default
}

std::string out_or_json(const std::string& out, const std::string& json) {
  if (!out.empty() && !json.empty() && out != json)
    throw Error("--out " + out + " and --json " + json + " name the same result twice",
                "give one of them: --json is a second name of --out in this subcommand");
  return out.empty() ? json : out;
}

}  // namespace hb::cli
