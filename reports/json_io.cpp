#include "reports/json_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "reports/schema.h"

namespace hb::reports {

std::string to_json_text(const Report& report) { return report_to_json(report).dump(2) + "\n"; }

Report from_json_text(const std::string& text, const std::string& source) {
  nlohmann::ordered_json j;
  try {
    j = nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    const bool truncated = e.byte >= text.size();
    throw Error(source + ": not valid JSON" +
                    (truncated ? " (the file ends too early, after " + std::to_string(text.size()) + " bytes: truncated?)"
                               : " at byte " + std::to_string(e.byte) + " of " + std::to_string(text.size())),
                truncated ? "the file was cut short (copied while being written, disk full, or an interrupted "
                            "transfer); hybridbench writes reports atomically, so re-copy it or re-run the sweep"
                          : "the file is damaged or not JSON; pass a report written by `hybridbench run`");
  }
  return report_from_json(j, source);
}

static std::string errno_text() { return std::strerror(errno); }

void write_file_atomic(const std::string& path, const std::string& text) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  // Same directory as the target, so rename() is atomic (never across file systems); hidden so a
  // leftover from a killed process does not look like a report.
  std::string tmpl = (dir / ("." + target.filename().string() + ".XXXXXX.tmp")).string();
  const int fd = mkstemps(tmpl.data(), 4);
  if (fd < 0)
    throw Error("cannot create a temporary file next to " + path + ": " + errno_text(),
                "check that the directory " + dir.string() + " exists and is writable", kExitFailure);
  auto fail = [&](const std::string& what) {
    const std::string why = errno_text();
    ::close(fd);
    ::unlink(tmpl.c_str());
    throw Error("cannot write " + path + ": " + what + ": " + why, "check free space and permissions of " + dir.string(),
                kExitFailure);
  };
  // mkstemp creates 0600; give the file the mode a plain open() would (0666 minus umask).
  const mode_t mask = ::umask(0);
  ::umask(mask);
  if (::fchmod(fd, 0666 & ~mask) != 0) fail("chmod");
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("write");
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) fail("fsync");
  if (::close(fd) != 0) {
    const std::string why = errno_text();
    ::unlink(tmpl.c_str());
    throw Error("cannot write " + path + ": close: " + why, "check free space of " + dir.string(), kExitFailure);
  }
  if (::rename(tmpl.c_str(), path.c_str()) != 0) {
    const std::string why = errno_text();
    ::unlink(tmpl.c_str());
    throw Error("cannot replace " + path + ": " + why, "check permissions of " + dir.string(), kExitFailure);
  }
  // Make the rename itself durable; failure here loses nothing already visible, so it is ignored.
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

void write_report(const std::string& path, const Report& report) { write_file_atomic(path, to_json_text(report)); }

Report read_report(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error("cannot open report " + path + ": " + errno_text(),
                "check the path; reports are written by `hybridbench run --out FILE.json`");
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw Error("cannot read report " + path + ": " + errno_text(), "check the file", kExitFailure);
  return from_json_text(ss.str(), path);
}

}  // namespace hb::reports
