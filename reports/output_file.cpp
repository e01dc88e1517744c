#include "reports/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>

#include "core/error.h"

namespace hb::reports {

namespace {

namespace fs = std::filesystem;

std::string errno_text(int e = errno) { return std::strerror(e); }

// The temporary file a regular file is written through: ".NAME.XXXXXX.tmp" next to it.
const std::string kTempPrefix = ".", kTempSuffix = ".XXXXXX.tmp";

// Digits only, small enough for a descriptor.
std::optional<int> parse_fd(const std::string& s) {
  if (s.empty() || s.size() > 9) return std::nullopt;
  for (const char c : s)
    if (c < '0' || c > '9') return std::nullopt;
  return std::stoi(s);
}

// /dev/stdout, /dev/fd/1, /proc/self/fd/1 ... name one of our own descriptors. They are written
// through the descriptor itself: resolving them as links gives "pipe:[123]" or a terminal, and
// replacing what they point to would clobber a file the shell opened with >> or truncate a pipe.
std::optional<int> own_descriptor(const std::string& path) {
  if (path == "/dev/stdin") return 0;
  if (path == "/dev/stdout") return 1;
  if (path == "/dev/stderr") return 2;
  const std::string pid_fd = "/proc/" + std::to_string(::getpid()) + "/fd/";
  for (const std::string& prefix : {std::string("/dev/fd/"), std::string("/proc/self/fd/"),
                                    std::string("/proc/thread-self/fd/"), pid_fd})
    if (path.rfind(prefix, 0) == 0) return parse_fd(path.substr(prefix.size()));
  return std::nullopt;
}

// Where the text of an output path really goes, after following symlinks one hop at a time
// (a dangling link names the file to create, which realpath() cannot tell).
struct Target {
  std::optional<int> fd;  // one of our own descriptors
  std::string path;       // the final non-link path otherwise
  bool exists = false;
  struct stat st {};
  int lstat_errno = 0;  // why lstat failed when !exists
  bool loop = false;    // too many links
};

Target resolve(const std::string& path) {
  Target t;
  std::string cur = path;
  for (int hop = 0; hop < 40; ++hop) {
    if ((t.fd = own_descriptor(cur))) return t;
    t.path = cur;
    if (::lstat(cur.c_str(), &t.st) != 0) {
      t.lstat_errno = errno;
      return t;
    }
    if (!S_ISLNK(t.st.st_mode)) {
      t.exists = true;
      return t;
    }
    std::string link(4096, '\0');
    const ssize_t n = ::readlink(cur.c_str(), link.data(), link.size());
    if (n < 0) {
      t.lstat_errno = errno;
      return t;
    }
    link.resize(static_cast<size_t>(n));
    const fs::path p(link);
    cur = p.is_absolute() ? link : (fs::path(cur).parent_path() / p).string();
  }
  t.loop = true;
  return t;
}

std::string parent_dir(const std::string& path) {
  const fs::path p(path);
  return p.has_parent_path() ? p.parent_path().string() : ".";
}

// The file an existing path reaches (following every link); nullopt when there is none.
std::optional<struct stat> stat_of(const std::string& path) {
  struct stat st {};
  if (const auto fd = own_descriptor(path)) {
    if (::fstat(*fd, &st) == 0) return st;
    return std::nullopt;
  }
  if (::stat(path.c_str(), &st) == 0) return st;
  return std::nullopt;
}

bool same_inode(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

// Whether `path` (existing or not, links followed) lies in the folder `dir` or below it.
bool inside(const std::string& path, const std::string& dir) {
  std::error_code ec;
  const fs::path d = fs::canonical(dir, ec);
  if (ec) return false;
  const fs::path rel = fs::weakly_canonical(fs::absolute(path, ec), ec).lexically_relative(d);
  return !ec && !rel.empty() && *rel.begin() != "..";
}

void write_all(int fd, const std::string& text, const std::string& path) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int e = n < 0 ? errno : EIO;
      throw Error("cannot write " + path + ": " + errno_text(e) + " (" + std::to_string(done) +
                      " of " + std::to_string(text.size()) + " bytes written)",
                  e == ENOSPC  ? "free space on the device, or write somewhere else"
                  : e == EFBIG ? "raise the file-size limit (ulimit -f), or write less"
                               : "check the output path",
                  kExitFailure);
    }
    done += static_cast<size_t>(n);
  }
}

void write_descriptor(int fd, const std::string& text, const std::string& path) {
  // Whatever the command printed before through the C++ and C streams goes first.
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  write_all(fd, text, path);
}

// A device, FIFO or socket: written where it is, never created, truncated or replaced.
void write_in_place(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    throw Error("cannot open " + path + " for writing: " + errno_text(), "check the output path",
                kExitFailure);
  try {
    write_all(fd, text, path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::close(fd) != 0)
    throw Error("cannot write " + path + ": close: " + errno_text(), "check the output path",
                kExitFailure);
}

// A regular file (existing: `old`, else null) is replaced in two steps: its text goes to a
// temporary file in the same folder (so rename() is atomic, never across file systems) with the
// old file's mode and owner, fsynced; then the rename. Several outputs of one command stage all
// their files before any is renamed, so a failure leaves every one of them as it was.
struct StagedFile {
  std::string path, temp;
};

StagedFile stage_replacement(const std::string& path, const std::string& text,
                             const struct stat* old) {
  const std::string dir = parent_dir(path);
  // Hidden, so a leftover from a killed process does not look like a report.
  std::string tmpl =
      (fs::path(dir) / (kTempPrefix + fs::path(path).filename().string() + kTempSuffix)).string();
  const int fd = ::mkstemps(tmpl.data(), 4);
  if (fd < 0)
    throw Error("cannot create a temporary file next to " + path + ": " + errno_text(),
                "check that the folder " + dir + " exists and is writable", kExitFailure);
  auto fail = [&](const std::string& what, int e) {
    ::close(fd);
    ::unlink(tmpl.c_str());
    throw Error("cannot write " + path + ": " + what + ": " + errno_text(e),
                "check free space and permissions of " + dir, kExitFailure);
  };
  if (old) {
    // Owner first: chown clears set-id bits, which the chmod then restores. Only root (or the
    // owner changing to one of its groups) may chown; otherwise the file becomes ours, as any
    // rewrite by rename would.
    if ((old->st_uid != ::geteuid() || old->st_gid != ::getegid()) &&
        ::fchown(fd, old->st_uid, old->st_gid) != 0 && ::geteuid() == 0)
      fail("chown", errno);
    if (::fchmod(fd, old->st_mode & 07777) != 0) fail("chmod", errno);
  } else {
    // mkstemp creates 0600; a new file gets the mode a plain open() would (0666 minus umask).
    const mode_t mask = ::umask(0);
    ::umask(mask);
    if (::fchmod(fd, 0666 & ~mask) != 0) fail("chmod", errno);
  }
  try {
    write_all(fd, text, path);
  } catch (...) {
    ::close(fd);
    ::unlink(tmpl.c_str());
    throw;
  }
  if (::fsync(fd) != 0) fail("fsync", errno);
  const int closed = ::close(fd);
  const int close_errno = errno;
  if (closed != 0) {
    ::unlink(tmpl.c_str());
    throw Error("cannot write " + path + ": close: " + errno_text(close_errno),
                "check free space of " + dir, kExitFailure);
  }
  return {path, tmpl};
}

void commit_replacement(const StagedFile& f) {
  const std::string dir = parent_dir(f.path);
  if (::rename(f.temp.c_str(), f.path.c_str()) != 0) {
    const int e = errno;
    ::unlink(f.temp.c_str());
    throw Error("cannot replace " + f.path + ": " + errno_text(e), "check permissions of " + dir,
                kExitFailure);
  }
  // Make the rename itself durable; failure here loses nothing already visible, so it is ignored.
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

}  // namespace

bool is_stdout_path(const std::string& path) { return path == "-" || own_descriptor(path) == 1; }

void check_output_path(const std::string& option, const std::string& path,
                       const std::vector<std::string>& inputs) {
  if (path.empty() || is_stdout_path(path)) return;
  auto refuse = [&](const std::string& problem, const std::string& fix) {
    throw Error(option + " " + path + ": " + problem, fix, kExitUsage);
  };
  const Target t = resolve(path);
  if (t.loop)
    refuse("too many levels of symbolic links", "point " + option + " at a file, not a link loop");
  if (t.fd) {
    const int flags = ::fcntl(*t.fd, F_GETFL);
    if (flags < 0)
      refuse("descriptor " + std::to_string(*t.fd) + " is not open", "use - for standard output");
    if ((flags & O_ACCMODE) == O_RDONLY)
      refuse("descriptor " + std::to_string(*t.fd) + " is open for reading only",
             "use - for standard output");
  } else if (t.exists) {
    if (S_ISDIR(t.st.st_mode))
      refuse("is a folder", "give a file name, e.g. " + (fs::path(path) / "report.json").string());
    if (::access(t.path.c_str(), W_OK) != 0)
      refuse((t.path == path ? "" : "(" + t.path + ") ") + "is not writable: " + errno_text(),
             "change its permissions or choose another path");
    const std::string dir = parent_dir(t.path);
    if (S_ISREG(t.st.st_mode) && ::access(dir.c_str(), W_OK | X_OK) != 0)
      refuse("its folder " + dir + " is not writable: " + errno_text() +
                 " (the file is replaced atomically, through a temporary file next to it)",
             "make " + dir + " writable or choose another path");
  } else {
    const std::string dir = parent_dir(t.path);
    struct stat ds {};
    if (::stat(dir.c_str(), &ds) != 0)
      refuse("the folder " + dir + " does not exist",
             "create it first (mkdir -p " + dir + ") or choose another path; nothing was run");
    if (!S_ISDIR(ds.st_mode)) refuse(dir + " is not a folder", "choose another path");
    if (::access(dir.c_str(), W_OK | X_OK) != 0)
      refuse("the folder " + dir + " is not writable: " + errno_text(),
             "make it writable or choose another path; nothing was run");
  }
  if (!t.fd && (!t.exists || S_ISREG(t.st.st_mode)))
    check_name_room(option, t.path, kTempPrefix.size() + kTempSuffix.size(),
                    "the temporary file it is written through");
  // An input folder (a --sysfs-root tree) is inputs too: nothing is written inside it.
  if (!t.fd)
    for (const auto& in : inputs)
      if (const auto folder = stat_of(in); folder && S_ISDIR(folder->st_mode) && inside(path, in))
        refuse("is inside the input folder " + in + " (writing it would change the input)",
               "write " + option + " outside " + in);
  // An output that is an input would destroy it (reports are read whole first, but a crash or
  // a failed sweep would then leave neither). Only files that exist can be the same file.
  if (const auto out = stat_of(path)) {
    for (const auto& in : inputs) {
      if (in.empty() || is_stdout_path(in)) continue;
      const auto st = stat_of(in);
      if (st && same_inode(*out, *st))
        refuse("is the input " + in + " (writing it would destroy the input)",
               "write " + option + " to another file");
    }
  }
}

void check_name_room(const std::string& option, const std::string& path, size_t extra,
                     const std::string& what) {
  const std::string name = fs::path(path).filename().string();
  const long limit = ::pathconf(parent_dir(path).c_str(), _PC_NAME_MAX);
  const size_t max_name = limit > 0 ? static_cast<size_t>(limit) : 255;
  if (name.size() + extra <= max_name) return;
  throw Error(option + " " + path + ": its file name is " + std::to_string(name.size()) +
                  " characters, and " + what + " would be " + std::to_string(name.size() + extra) +
                  ", over this file system's limit of " + std::to_string(max_name),
              "use a file name of at most " + std::to_string(max_name - extra) + " characters",
              kExitUsage);
}

void check_distinct_outputs(const std::vector<std::pair<std::string, std::string>>& outputs) {
  // The file each output ends in: a regular file's inode, or the normalised path it will have.
  auto key = [](const std::string& path) -> std::optional<std::string> {
    if (is_stdout_path(path)) return std::string("-");  // also /dev/stdout: same stream
    const Target t = resolve(path);
    if (t.fd || (t.exists && !S_ISREG(t.st.st_mode)))
      return std::nullopt;  // /dev/null twice is fine
    if (t.exists) return std::to_string(t.st.st_dev) + ":" + std::to_string(t.st.st_ino);
    std::error_code ec;
    return fs::weakly_canonical(fs::absolute(t.path, ec), ec).string();
  };
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].second.empty()) continue;
    const auto ki = key(outputs[i].second);
    for (size_t j = i + 1; j < outputs.size() && ki; ++j) {
      if (outputs[j].second.empty() || key(outputs[j].second) != ki) continue;
      const bool both_stdout = *ki == "-";
      throw Error(outputs[i].first + " and " + outputs[j].first +
                      (both_stdout ? " both write to standard output"
                                   : " are the same file " + outputs[i].second),
                  both_stdout ? "give one of them a file" : "give each its own file");
    }
  }
}

void write_output(const std::string& path, const std::string& text) {
  write_outputs({{path, text}});
}

void write_outputs(const std::vector<std::pair<std::string, std::string>>& outputs) {
  std::vector<std::pair<Target, const std::string*>> regular;
  for (const auto& [path, text] : outputs) {
    if (path.empty()) throw Error("no output path given", "name a file, or - for standard output");
    if (is_stdout_path(path)) {
      write_descriptor(STDOUT_FILENO, text, "standard output");
      continue;
    }
    const Target t = resolve(path);
    if (t.loop)
      throw Error("cannot write " + path + ": too many levels of symbolic links", "check the path",
                  kExitFailure);
    if (t.fd) {
      write_descriptor(*t.fd, text, path);
    } else if (t.exists && S_ISDIR(t.st.st_mode)) {
      throw Error("cannot write " + path + ": it is a folder", "give a file name", kExitFailure);
    } else if (t.exists && !S_ISREG(t.st.st_mode)) {
      write_in_place(t.path, text);
    } else {
      regular.emplace_back(t, &text);
    }
  }
  // A file-size limit (ulimit -f) must fail the write with EFBIG, which removes the temporary
  // file, not kill the process with SIGXFSZ and leave it behind.
  ::signal(SIGXFSZ, SIG_IGN);
  std::vector<StagedFile> staged;
  try {
    for (const auto& [t, text] : regular)
      staged.push_back(stage_replacement(t.path, *text, t.exists ? &t.st : nullptr));
  } catch (...) {
    for (const auto& f : staged) ::unlink(f.temp.c_str());
    throw;
  }
  for (const auto& f : staged) commit_replacement(f);
}

}  // namespace hb::reports
