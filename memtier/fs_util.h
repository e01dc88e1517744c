#pragma once
// Reading small pseudo-files (sysfs, procfs) under a root prefix, so every reader of machine
// state can be pointed at a fixture tree instead of the live /sys and /proc.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hb::memtier {

// root + "/" + rel without doubled slashes; root "" or "/" means the live file system.
std::string under_root(const std::string& root, const std::string& rel);
// Whole text of a file with trailing whitespace removed; nullopt if missing or unreadable.
// Throws hb::Error (exit 2) for a FIFO, device or folder, or a file over kMaxPseudoFileBytes
// (memtier/input_file.h).
std::optional<std::string> read_text(const std::string& path);
// Entry names of a directory (files, dirs and links), sorted; empty if it does not exist.
std::vector<std::string> list_dir(const std::string& path);
bool path_exists(const std::string& path);
// Target of a symbolic link (as written, not resolved); empty if `path` is not a link.
std::string link_target(const std::string& path);
// Path with links resolved; `path` unchanged if it cannot be resolved.
std::string resolved_path(const std::string& path);
// Integer in decimal or 0x-hex; nullopt when malformed, signed ("-1" is not 2^64-1) or too large.
std::optional<uint64_t> parse_u64(const std::string& text);

}  // namespace hb::memtier
