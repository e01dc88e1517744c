#pragma once
// Reading a file a user hands us (a report, a journal, a platform profile, an hwloc export, a
// file of a --sysfs-root tree). Only a regular file is read, and only up to a cap: the file is
// opened without blocking and checked with fstat before a byte is read, so a FIFO cannot hang a
// command, /dev/zero or /dev/urandom cannot fill memory, and a folder is named as one. Every
// refusal is an hb::Error (exit 2) naming the file, what is wrong and the fix.
#include <cstddef>
#include <optional>
#include <string>

namespace hb {

// What the caller reads: its name in messages, the most bytes one may hold, how to get a good one.
struct InputKind {
  std::string what;  // "report", "platform profile", "hwloc topology file", "sysfs file"
  size_t max_bytes = 0;
  std::string fix;  // appended to the fix of a missing file, a folder or an oversized file
};

// Caps (documented in memtier/README.md): far above what hybridbench writes, far below memory.
inline constexpr size_t kMiB = size_t{1} << 20;
inline constexpr size_t kMaxReportBytes = 512 * kMiB;     // reports and sweep journals
inline constexpr size_t kMaxProfileBytes = 16 * kMiB;     // platform profiles, configs
inline constexpr size_t kMaxTopologyBytes = 64 * kMiB;    // hwloc XML exports
inline constexpr size_t kMaxPseudoFileBytes = 16 * kMiB;  // one sysfs or procfs file

// The whole file. Throws hb::Error: exit 2 when it is missing, not a regular file or too large,
// exit 1 when reading it fails midway (EIO).
std::string read_input_file(const std::string& path, const InputKind& kind);
// As read_input_file, but nullopt when the file cannot be opened (missing, no permission): for
// the optional files of a sysfs tree. A FIFO, device, folder or oversized file still throws.
std::optional<std::string> read_input_file_if_present(const std::string& path,
                                                      const InputKind& kind);
// The same checks without reading, for a library that opens the file itself (hwloc).
void check_input_file(const std::string& path, const InputKind& kind);

}  // namespace hb
