#include "bench/journal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/input_file.h"
#include "core/error.h"
#include "core/json_text.h"
#include "reports/schema.h"

namespace hb::bench {

namespace {

using json = nlohmann::ordered_json;
constexpr const char* kJournalSchema = "hybridbench.journal/1";

std::string errno_text() { return std::strerror(errno); }

// The directory entry of a new file is durable only once its directory is synced.
void sync_dir_of(const std::string& path) {
  const std::filesystem::path p(path);
  const std::string dir = p.has_parent_path() ? p.parent_path().string() : ".";
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

std::string start_over(const std::string& path) {
  return "or delete " + path + " to start the sweep over";
}

// The journal's first line: its schemas and the sweep's identity. `bad` makes the error for a
// damaged journal.
SweepIdentity read_header(const json& j, const std::function<Error(const std::string&)>& bad,
                          const std::string& where, const std::string& path) {
  // The header's texts, "" when absent; any other type is damage (never a json type_error).
  auto text_of = [&](const char* key) -> std::string {
    if (!j.contains(key)) return "";
    if (!j[key].is_string())
      throw bad(std::string("header member \"") + key + "\" is not a string");
    return j[key].get<std::string>();
  };
  if (text_of("journal") != kJournalSchema)
    throw bad("not a hybridbench sweep journal (its first line must name \"" +
              std::string(kJournalSchema) + "\")");
  const std::string report_schema = text_of("report_schema");
  if (report_schema != reports::schema_string())
    throw Error(where + ": journal of report schema \"" + report_schema +
                    "\", this build writes \"" + reports::schema_string() + "\"",
                "resume with the hybridbench version that started the sweep, " + start_over(path));
  SweepIdentity id;
  id.build = text_of("build");
  id.command_line = text_of("command_line");
  if (!j.contains("options") || !j["options"].is_object())
    throw bad("the header has no \"options\" object");
  for (const auto& [k, v] : j["options"].items()) {
    if (!v.is_string()) throw bad("option \"" + k + "\" is not a string");
    id.options[k] = v.get<std::string>();
  }
  return id;
}

}  // namespace

std::string journal_path(const std::string& report_path) { return report_path + ".partial.jsonl"; }

Journal Journal::create(const std::string& path, const SweepIdentity& identity) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0666);
  if (fd < 0 && errno == EEXIST) {
    // A journal without a finished point (a run killed during its first unit, or one that ended
    // before its header was on disk) loses nothing. The caller holds --out's lock, so no other
    // run is writing it.
    const int64_t points = journal_points(path);
    if (points == 0 && ::unlink(path.c_str()) == 0)
      fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0666);
    else
      throw Error(path + " holds " +
                      (points > 0 ? std::to_string(points) + " finished points" : "the journal") +
                      " of an interrupted sweep, which this run would lose",
                  "continue that sweep with the same options and --resume " +
                      path.substr(0, path.size() - std::string(".partial.jsonl").size()) + ", " +
                      start_over(path));
  }
  if (fd < 0)
    throw Error("cannot create the sweep journal " + path + ": " + errno_text(),
                "check that the directory of --out exists and is writable", kExitFailure);
  Journal j(path, fd);
  json options = json::object();
  for (const auto& [k, v] : identity.options) options[k] = v;
  const json header = {{"journal", kJournalSchema},
                       {"report_schema", reports::schema_string()},
                       {"build", identity.build},
                       {"command_line", identity.command_line},
                       {"options", options}};
  try {
    j.write_line(header.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  } catch (const Error& e) {
    j.remove();  // a journal without its header (a full disk) holds nothing and would only block
    throw Error(e.problem() + " (its first line; nothing ran, and no journal is left)",
                "free space where --out goes, or raise the file-size limit (ulimit -f)",
                kExitFailure);
  }
  sync_dir_of(path);
  return j;
}

Journal Journal::reopen(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_APPEND | O_CLOEXEC);
  if (fd < 0)
    throw Error("cannot open the sweep journal " + path + ": " + errno_text(),
                "check its permissions", kExitFailure);
  Journal j(path, fd);
  // A kill in the middle of a line leaves it unterminated: cut it off, or the next line would
  // be glued to it (read_journal ignores such a last line).
  struct stat st {};
  if (::fstat(fd, &st) == 0 && st.st_size > 0) {
    std::ifstream in(path, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t end = text.rfind('\n');
    const off_t keep = end == std::string::npos ? 0 : static_cast<off_t>(end + 1);
    if (keep != st.st_size && ::ftruncate(fd, keep) != 0)
      throw Error("cannot repair the sweep journal " + path + ": " + errno_text(),
                  "check its permissions", kExitFailure);
  }
  return j;
}

Journal::Journal(Journal&& o) noexcept
    : path_(std::move(o.path_)), fd_(o.fd_), removed_(o.removed_) {
  o.fd_ = -1;
}

Journal::~Journal() {
  if (fd_ >= 0) ::close(fd_);
}

void Journal::write_line(const std::string& line) {
  const std::string text = line + "\n";
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      throw Error("cannot append to the sweep journal " + path_ + ": " + errno_text(),
                  "check free space; the points journaled so far are kept", kExitFailure);
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd_) != 0 && errno != EINVAL)
    throw Error("cannot sync the sweep journal " + path_ + ": " + errno_text(), "check free space",
                kExitFailure);
}

void Journal::append(const FinishedUnit& unit) {
  const size_t of = unit.points.size();
  for (size_t i = 0; i < of; ++i)
    write_line(json{{"unit", unit.key},
                    {"index", i},
                    {"of", of},
                    {"point", reports::point_to_json(unit.points[i])}}
                   .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

void Journal::remove() {
  if (removed_) return;
  removed_ = true;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (::unlink(path_.c_str()) == 0) sync_dir_of(path_);
}

JournalContents read_journal(const std::string& path) {
  const std::string fix =
      "--resume takes the --out path of an interrupted run (its journal is that path + "
      ".partial.jsonl); a sweep that finished has no journal left";
  // Bounded and regular files only: a FIFO or /dev/zero in its place must not hang --resume.
  const auto read = read_input_file_if_present(path, {"sweep journal", kMaxReportBytes, fix});
  if (!read) throw Error("no sweep journal " + path + " to resume from: " + errno_text(), fix);
  const std::string& text = *read;
  if (text.find('\n') == std::string::npos)
    throw Error("no sweep journal to resume from: " + path +
                    " has no complete first line (its run ended, or the disk filled, before "
                    "writing it), so no point finished",
                "run the sweep without --resume (it replaces " + path + ")");
  JournalContents c;
  // Units in progress: key -> points of the current attempt (a unit rerun after a kill starts
  // again at index 0).
  std::map<std::string, std::vector<reports::Point>> open;
  size_t pos = 0;
  for (int line_no = 1;; ++line_no) {
    const size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) break;  // no line, or a last one cut short by a kill: ignored
    const std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    const std::string where = path + ": line " + std::to_string(line_no);
    auto bad = [&](const std::string& what) -> Error {
      return Error(where + ": " + what, "the journal is damaged; " + start_over(path));
    };
    json j;
    try {
      j = parse_json_text<json>(line);
    } catch (const std::exception& e) {
      throw bad(std::string("not valid JSON: ") + e.what());
    }
    if (!j.is_object()) throw bad("not a JSON object");
    if (line_no == 1) {
      c.identity = read_header(j, bad, where, path);
      continue;
    }
    if (!j.contains("unit") || !j["unit"].is_string() || !j.contains("index") ||
        !j["index"].is_number_unsigned() || !j.contains("of") || !j["of"].is_number_unsigned() ||
        !j.contains("point"))
      throw bad("expected {\"unit\": text, \"index\": n, \"of\": n, \"point\": {...}}");
    const std::string unit = j["unit"].get<std::string>();
    const size_t index = j["index"].get<size_t>(), of = j["of"].get<size_t>();
    if (of == 0 || index >= of)
      throw bad("point index " + std::to_string(index) + " of " + std::to_string(of));
    auto& points = open[unit];
    if (index == 0) points.clear();
    if (index != points.size())
      throw bad("point " + std::to_string(index) + " of unit " + unit + " out of order");
    points.push_back(reports::point_from_json(j["point"], where, "$.point"));
    if (points.size() == of) {
      c.points += static_cast<int64_t>(of);
      if (auto old = c.units.find(unit); old != c.units.end())
        c.points -= static_cast<int64_t>(old->second.size());
      c.units[unit] = std::move(points);
      open.erase(unit);
    }
  }
  return c;
}

int64_t journal_points(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return -1;
  std::string first;
  // No complete first line: nothing was journaled after it (read_journal refuses it as absent).
  if (!std::getline(in, first) || in.eof()) return 0;
  try {
    return read_journal(path).points;
  } catch (const Error&) {
    return -1;
  }
}

void check_same_sweep(const SweepIdentity& journal, const SweepIdentity& now,
                      const std::string& path) {
  const std::string fix_options =
      "run with the interrupted sweep's options (it was: " + journal.command_line + "), " +
      start_over(path);
  if (journal.build != now.build)
    throw Error("--resume: " + path + " was written by hybridbench " + journal.build +
                    ", this is " + now.build + "; one report must not mix builds",
                "resume with the build that started the sweep, " + start_over(path));
  auto value = [](const std::map<std::string, std::string>& m, const std::string& k) {
    auto it = m.find(k);
    return it == m.end() ? std::string("(not set)") : "\"" + it->second + "\"";
  };
  std::map<std::string, std::string> keys = journal.options;
  keys.insert(now.options.begin(), now.options.end());
  // Options both sweeps have first: one that only some values of another give (--pass-process,
  // echoed only with --repetitions above 1) must not be named for a change the user made to that
  // other option.
  for (const bool in_both : {true, false})
    for (const auto& [k, unused] : keys) {
      if ((journal.options.count(k) && now.options.count(k)) != in_both) continue;
      const std::string was = value(journal.options, k), is = value(now.options, k);
      if (was != is)
        throw Error("--resume: option " + k + " differs: the interrupted sweep had " + was +
                        ", this run has " + is,
                    fix_options);
    }
}

}  // namespace hb::bench
