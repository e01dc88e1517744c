#pragma once
// Facts about this binary, for --version and every report's context.
#include <string>

namespace hb {

struct BuildInfo {
  std::string version, git_commit, build_type, compiler;
  bool cuda = false;
  std::string cuda_version;  // compile-time toolkit version, empty without CUDA
};

const BuildInfo& build_info();

}  // namespace hb
