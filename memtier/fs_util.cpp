#include "memtier/fs_util.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "core/input_file.h"

namespace hb::memtier {

namespace fs = std::filesystem;

std::string under_root(const std::string& root, const std::string& rel) {
  std::string r = root;
  while (r.size() > 1 && r.back() == '/') r.pop_back();
  if (r.empty() || r == "/") return "/" + rel;
  return r + "/" + rel;
}

std::optional<std::string> read_text(const std::string& path) {
  // A --sysfs-root tree is a user's input: a FIFO planted in it must not hang discovery.
  static const InputKind kind{"sysfs file", kMaxPseudoFileBytes,
                              "a --sysfs-root tree holds the regular files of a copy of /sys"};
  auto text = read_input_file_if_present(path, kind);
  if (!text) return std::nullopt;
  std::string s = std::move(*text);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

std::vector<std::string> list_dir(const std::string& path) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec))
    out.push_back(it->path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

bool path_exists(const std::string& path) {
  std::error_code ec;
  return fs::exists(fs::symlink_status(path, ec));
}

std::string link_target(const std::string& path) {
  std::error_code ec;
  if (!fs::is_symlink(fs::symlink_status(path, ec))) return {};
  return fs::read_symlink(path, ec).string();
}

std::string resolved_path(const std::string& path) {
  std::error_code ec;
  const fs::path p = fs::canonical(path, ec);
  return ec ? path : p.string();
}

std::optional<uint64_t> parse_u64(const std::string& text) {
  // stoull would take a sign (and wrap "-1" to 2^64-1) or leading blanks: digits only.
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) return std::nullopt;
  try {
    size_t used = 0;
    const uint64_t v = std::stoull(text, &used, 0);
    if (used != text.size()) return std::nullopt;
    return v;
  } catch (...) {
    return std::nullopt;
  }
}

}  // namespace hb::memtier
