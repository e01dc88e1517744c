#include "core/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"

namespace hb {

namespace {

std::string size_text(size_t bytes) {
  return bytes % kMiB == 0 ? std::to_string(bytes / kMiB) + " MiB"
                           : std::to_string(bytes) + " bytes";
}

const char* file_type_name(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// Closes the descriptor on every way out.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

[[noreturn]] void too_large(const std::string& path, const InputKind& kind) {
  throw Error(kind.what + " " + path + " is larger than " + size_text(kind.max_bytes) +
                  ", the most a " + kind.what + " may hold",
              "pass the right file: no " + kind.what + " is this large; " + kind.fix);
}

// Opened without blocking (a FIFO with no writer would wait forever) and checked with fstat
// before anything is read. -1 with errno set when open() fails.
int open_checked(const std::string& path, const InputKind& kind) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return -1;
  Fd guard{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    throw Error("cannot read " + kind.what + " " + path + ": " + std::strerror(errno), kind.fix,
                kExitFailure);
  if (S_ISDIR(st.st_mode))
    throw Error(kind.what + " " + path + " is a folder, not a file",
                "pass the " + kind.what + " file itself; " + kind.fix);
  if (!S_ISREG(st.st_mode))
    throw Error(kind.what + " " + path + " is " + file_type_name(st.st_mode) +
                    ": hybridbench reads only regular files (a pipe could block forever, a "
                    "device could never end)",
                "save it as a regular file first (e.g. `cat " + path + " > copy`) and use that; " +
                    kind.fix);
  if (static_cast<unsigned long long>(st.st_size) > kind.max_bytes) too_large(path, kind);
  guard.fd = -1;
  return fd;
}

// Reads to the end, but never more than the cap (procfs and sysfs files report size 0 or 4096,
// whatever they hold). nullopt, errno set, when a read fails (EIO; some sysfs attributes).
std::optional<std::string> read_capped(int fd, const std::string& path, const InputKind& kind) {
  Fd guard{fd};
  std::string text;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) return text;
    if (text.size() + static_cast<size_t>(n) > kind.max_bytes) too_large(path, kind);
    text.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace

std::string read_input_file(const std::string& path, const InputKind& kind) {
  const int fd = open_checked(path, kind);
  if (fd < 0)
    throw Error("cannot read " + kind.what + " " + path + ": " + std::strerror(errno), kind.fix);
  auto text = read_capped(fd, path, kind);
  if (!text)
    throw Error("cannot read " + kind.what + " " + path + ": " + std::strerror(errno),
                "check the file and the device it is on", kExitFailure);
  return std::move(*text);
}

std::optional<std::string> read_input_file_if_present(const std::string& path,
                                                      const InputKind& kind) {
  const int fd = open_checked(path, kind);
  if (fd < 0) return std::nullopt;
  return read_capped(fd, path, kind);
}

void check_input_file(const std::string& path, const InputKind& kind) {
  const int fd = open_checked(path, kind);
  if (fd < 0)
    throw Error("cannot read " + kind.what + " " + path + ": " + std::strerror(errno), kind.fix);
  ::close(fd);
}

}  // namespace hb
