#pragma once
// run's --price, --power and --gpus-per-node: what the node serving the run costs and draws,
// overriding a --platform profile's "economics" (model/economics.h) or standing alone for a
// measured run without one. Parsed strictly (core/parse.h): a non-finite, negative or zero
// price, a negative power, an unknown or repeated key is an hb::Error (exit 2) with the fix.
#include <string>

#include <CLI/CLI.hpp>

#include "model/economics.h"

namespace hb::cli {

struct EconomicsArgs {
  std::string price;  // "USD_PER_HOUR" or "purchase=USD,years=N"
  std::string power;  // "gpu=W,cpu=W,memory=W,cxl=W", any of them
  std::string gpus_per_node;
};

void add_economics_options(CLI::App& app, EconomicsArgs& args);
model::EconomicsOverride parse_economics_args(const EconomicsArgs& args);
// Today's date in UTC, "YYYY-MM-DD": the date of figures given on the command line.
std::string today_utc();

}  // namespace hb::cli
