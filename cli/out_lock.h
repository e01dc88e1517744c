#pragma once
// One run at a time per report: `run --out OUT` (and `--resume OUT`) holds an exclusive flock on
// OUT.lock for its whole life, with its pid written inside. A second run or resume onto the same
// OUT is refused (exit 2) naming the holder's pid: two runs would append to one journal, and one
// report would overwrite the other's points. The kernel releases the lock however the process
// ends (a --repetitions pass process shares it, and dies with its parent), so a leftover lock
// file never blocks; a clean end removes it.
#include <string>

namespace hb::cli {

class OutLock {
 public:
  // "OUT.lock".
  static std::string path_for(const std::string& out);
  // Takes the lock; throws hb::Error (exit 2) when another process holds it, exit 1 when the
  // lock file cannot be made.
  explicit OutLock(const std::string& out);
  ~OutLock();  // removes the lock file, then releases the lock
  OutLock(const OutLock&) = delete;
  OutLock& operator=(const OutLock&) = delete;

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace hb::cli
