#include <iostream>

#include "cli/command.h"
#include "core/error.h"

namespace hb::cli {

int not_yet_available(const std::string& what) {
  std::cerr << "hybridbench: `" << what << "` is not yet available in this build\n";
  return kExitUsage;
}

}  // namespace hb::cli
