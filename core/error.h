#pragma once
// One exception type for every user-facing failure: what went wrong and how to fix it
// (CapacityError: the same, for memory that ran out).
// cli/ turns it into a message on stderr and a non-zero exit; nothing else prints.
#include <stdexcept>
#include <string>

namespace hb {

// Exit codes shared by every subcommand (documented in cli/README.md).
enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,     // runtime failure (I/O, CUDA error, ...)
  kExitUsage = 2,       // bad command line or input file; also "not yet available"
  kExitRegression = 3,  // `compare` found a regression beyond the threshold
};

class Error : public std::runtime_error {
 public:
  Error(std::string problem, std::string fix = {}, int exit_code = kExitUsage)
      : std::runtime_error(problem + (fix.empty() ? "" : "\n  fix: " + fix)),
        problem_(std::move(problem)),
        fix_(std::move(fix)),
        exit_code_(exit_code) {}
  const std::string& problem() const { return problem_; }
  const std::string& fix() const { return fix_; }
  int exit_code() const { return exit_code_; }

 private:
  std::string problem_, fix_;
  int exit_code_;
};

// Memory ran out: an accelerator's capacity budget, or the device allocator itself. The runner
// reports the point as status "oom" (not "error") by this type, never by the message's words.
class CapacityError : public Error {
 public:
  using Error::Error;
};

}  // namespace hb
