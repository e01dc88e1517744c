#pragma once
// Shared by the fuzz targets: the input as text, and as a file for the readers that take only a
// path (trace and hwloc). One scratch file per process, rewritten for every input, on /dev/shm
// when there is one (no disk I/O per execution), removed when the process exits normally.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace hb::fuzz {

inline std::string as_text(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

inline std::string& scratch_path() {
  static std::string path;
  return path;
}

// Writes the input to this process's scratch file (name ending in `suffix`) and returns its path.
inline const std::string& as_file(const uint8_t* data, size_t size, const char* suffix) {
  std::string& path = scratch_path();
  if (path.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    const std::string dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : tmp ? tmp : "/tmp";
    path = dir + "/hb-fuzz-" + std::to_string(getpid()) + suffix;
    std::atexit([] { std::remove(scratch_path().c_str()); });
  }
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) std::abort();  // the fuzz run itself is broken, not the code under test
  if (size && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
  return path;
}

}  // namespace hb::fuzz
