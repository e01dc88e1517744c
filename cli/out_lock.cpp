#include "cli/out_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"

namespace hb::cli {

namespace {

// The pid the holder wrote into the lock file ("" when it has not written it yet).
std::string holder_pid(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  std::string pid = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  return pid;
}

bool same_file(int fd, const std::string& path) {
  struct stat a {
  }, b{};
  return ::fstat(fd, &a) == 0 && ::stat(path.c_str(), &b) == 0 && a.st_dev == b.st_dev &&
         a.st_ino == b.st_ino;
}

}  // namespace

std::string OutLock::path_for(const std::string& out) { return out + ".lock"; }

OutLock::OutLock(const std::string& out) : path_(path_for(out)) {
  // A holder that ends removes the file after we opened it: our lock is then on a file no later
  // run can find, so open the path again until the locked file is the one it names.
  for (int attempt = 0; attempt < 100; ++attempt) {
    const int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0)
      throw Error("cannot create the lock file " + path_ + ": " + std::strerror(errno),
                  "check that the folder of --out is writable", kExitFailure);
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int e = errno;
      const std::string pid = holder_pid(fd);
      ::close(fd);
      if (e != EWOULDBLOCK)
        throw Error("cannot lock " + path_ + ": " + std::strerror(e),
                    "check the file system of --out supports flock", kExitFailure);
      throw Error(out + " is being written by another hybridbench run" +
                      (pid.empty() ? "" : " (pid " + pid + ")") + ", which holds " + path_,
                  "wait for that run to end" +
                      (pid.empty() ? "" : " or stop it (kill " + pid + ")") + ", then --resume " +
                      out +
                      " if it was interrupted; or give this run "
                      "another --out",
                  kExitUsage);
    }
    if (same_file(fd, path_)) {
      fd_ = fd;
      break;
    }
    ::close(fd);
  }
  if (fd_ < 0)
    throw Error("cannot lock " + path_ + ": it keeps being replaced", "run again", kExitFailure);
  // Without the pid a refused run's message is only vaguer; the lock holds either way.
  const std::string pid = std::to_string(::getpid()) + "\n";
  (void)!::ftruncate(fd_, 0);
  (void)!::pwrite(fd_, pid.data(), pid.size(), 0);
}

OutLock::~OutLock() {
  // Removed while still held: a run that opened it meanwhile finds, once it holds the lock,
  // that the path no longer names its file, and opens it again.
  ::unlink(path_.c_str());
  ::close(fd_);
}

}  // namespace hb::cli
