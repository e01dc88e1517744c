// The one output writer (reports/output_file.h): what it must never destroy (symlinks, devices,
// FIFOs, /dev/stdout, a file's permissions and owner, an input) and the up-front path check.
#include "reports/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include <gtest/gtest.h>

#include "core/error.h"
#include "fixtures.h"

namespace hb::reports {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

mode_t lstat_mode(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 ? st.st_mode : 0;
}

// Runs `fn` with descriptor 1 on a pipe and returns what it wrote there (small texts only).
std::string captured_stdout(const std::function<void()>& fn) {
  int p[2];
  EXPECT_EQ(::pipe(p), 0);
  const int saved = ::dup(STDOUT_FILENO);
  ::dup2(p[1], STDOUT_FILENO);
  ::close(p[1]);
  try {
    fn();
  } catch (...) {
    ::dup2(saved, STDOUT_FILENO);
    ::close(saved);
    ::close(p[0]);
    throw;
  }
  ::dup2(saved, STDOUT_FILENO);  // closes the pipe's last write end: read() below ends
  ::close(saved);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(p[0], buf, sizeof buf)) > 0;)
    text.append(buf, static_cast<size_t>(n));
  ::close(p[0]);
  return text;
}

// The error `fn` throws (it must throw hb::Error).
Error error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no hb::Error thrown";
  return Error("none");
}

bool contains(const std::string& text, const std::string& piece) {
  return text.find(piece) != std::string::npos;
}

TEST(OutputFile, SymlinkIsWrittenThroughAndStaysALink) {
  TempDir dir;
  write_text(dir.file("real.json"), "old");
  fs::create_symlink("real.json", dir.file("link.json"));  // relative, as users make them
  write_output(dir.file("link.json"), "new\n");
  EXPECT_TRUE(fs::is_symlink(dir.file("link.json")));
  EXPECT_EQ(read_text(dir.file("real.json")), "new\n");
}

TEST(OutputFile, DanglingSymlinkCreatesItsTarget) {
  TempDir dir;
  fs::create_directory(dir.file("sub"));
  fs::create_symlink(dir.file("sub/made.json"), dir.file("link.json"));
  write_output(dir.file("link.json"), "made\n");
  EXPECT_TRUE(fs::is_symlink(dir.file("link.json")));
  EXPECT_EQ(read_text(dir.file("sub/made.json")), "made\n");
}

TEST(OutputFile, FifoIsWrittenInPlaceAndStaysAFifo) {
  TempDir dir;
  const std::string fifo = dir.file("pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // Read and write ends held here (O_RDWR never blocks on a FIFO), so the writer's open does not
  // wait and a writer that replaced the FIFO instead leaves nothing to read rather than a hang.
  const int fd = ::open(fifo.c_str(), O_RDWR | O_NONBLOCK);
  ASSERT_GE(fd, 0);
  const std::string text = "{\"through\": \"the fifo\"}\n";
  write_output(fifo, text);
  char buf[256] = {};
  const ssize_t n = ::read(fd, buf, sizeof buf);
  ::close(fd);
  EXPECT_EQ(n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string(), text);
  EXPECT_TRUE(S_ISFIFO(lstat_mode(fifo)));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()),
            1);  // no temporaries
}

// Device nodes are private copies (testing::make_char_device): a regressed writer must not
// replace the machine's /dev/null or /dev/full.
TEST(OutputFile, DevNullIsWrittenInPlace) {
  TempDir dir;
  const std::string null = dir.file("null");
  if (!testing::make_char_device(null, 1, 3))
    GTEST_SKIP() << "cannot make device nodes here (needs root)";
  write_output(null, "discarded\n");
  EXPECT_TRUE(S_ISCHR(lstat_mode(null)));
}

TEST(OutputFile, DevFullFailsWithTheReasonAndStaysADevice) {
  TempDir dir;
  const std::string full = dir.file("full");
  if (!testing::make_char_device(full, 1, 7))
    GTEST_SKIP() << "cannot make device nodes here (needs root)";
  const Error e = error_of([&] { write_output(full, "no room\n"); });
  EXPECT_EQ(e.exit_code(), kExitFailure);
  EXPECT_TRUE(contains(e.what(), full)) << e.what();
  EXPECT_TRUE(contains(e.what(), "No space left on device")) << e.what();
  EXPECT_TRUE(S_ISCHR(lstat_mode(full)));
}

TEST(OutputFile, DashAndDevStdoutWriteToDescriptorOne) {
  EXPECT_EQ(captured_stdout([] { write_output("-", "dash\n"); }), "dash\n");
  // A link like /dev/stdout (a private one: a regressed writer must not replace the machine's).
  TempDir dir;
  const std::string link = dir.file("stdout");
  fs::create_symlink("/proc/self/fd/1", link);
  EXPECT_EQ(captured_stdout([&] { write_output(link, "named\n"); }), "named\n");
  EXPECT_TRUE(S_ISLNK(lstat_mode(link)));
  EXPECT_TRUE(is_stdout_path("-"));
  EXPECT_TRUE(is_stdout_path("/proc/self/fd/1"));
  EXPECT_FALSE(is_stdout_path("/dev/stderr"));
}

TEST(OutputFile, RegularFileKeepsItsPermissions) {
  TempDir dir;
  const std::string f = dir.file("r.json");
  write_text(f, "old");
  ASSERT_EQ(::chmod(f.c_str(), 0640), 0);
  write_output(f, "new\n");
  EXPECT_EQ(read_text(f), "new\n");
  EXPECT_EQ(lstat_mode(f) & 07777, 0640u);
}

TEST(OutputFile, RootKeepsTheOwner) {
  if (::geteuid() != 0) GTEST_SKIP() << "only root can give a file to another owner";
  TempDir dir;
  const std::string f = dir.file("r.json");
  write_text(f, "old");
  ASSERT_EQ(::chown(f.c_str(), 65534, 65534), 0);
  write_output(f, "new\n");
  struct stat st {};
  ASSERT_EQ(::stat(f.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 65534u);
  EXPECT_EQ(st.st_gid, 65534u);
}

TEST(OutputFileCheck, MissingFolderIsAUsageErrorNamingTheOption) {
  const Error e = error_of([] { check_output_path("--out", "/nonexistent-hb/d/r.json"); });
  EXPECT_EQ(e.exit_code(), kExitUsage);
  EXPECT_TRUE(contains(e.what(), "--out /nonexistent-hb/d/r.json")) << e.what();
  EXPECT_TRUE(contains(e.what(), "does not exist")) << e.what();
  EXPECT_TRUE(contains(e.what(), "mkdir -p /nonexistent-hb/d")) << e.what();
}

TEST(OutputFileCheck, FolderIsRefused) {
  TempDir dir;
  const Error e = error_of([&] { check_output_path("--html", dir.path()); });
  EXPECT_EQ(e.exit_code(), kExitUsage);
  EXPECT_TRUE(contains(e.what(), "is a folder")) << e.what();
}

TEST(OutputFileCheck, InputIsRefusedAlsoThroughALink) {
  TempDir dir;
  write_text(dir.file("in.json"), "input");
  fs::create_symlink(dir.file("in.json"), dir.file("alias.json"));
  for (const auto& out : {dir.file("in.json"), dir.file("alias.json"), dir.path() + "/./in.json"}) {
    const Error e = error_of([&] { check_output_path("--json", out, {"", dir.file("in.json")}); });
    EXPECT_EQ(e.exit_code(), kExitUsage);
    EXPECT_TRUE(contains(e.what(), "is the input")) << e.what();
  }
  EXPECT_EQ(read_text(dir.file("in.json")), "input");
}

TEST(OutputFileCheck, WritablePathsPass) {
  TempDir dir;
  write_text(dir.file("old.json"), "x");
  check_output_path("--out", dir.file("new.json"), {dir.file("old.json")});
  check_output_path("--out", dir.file("old.json"), {dir.file("other.json")});
  check_output_path("--out", "-", {"-"});
  check_output_path("--out", "/dev/null");
  check_output_path("--out", "");
  check_output_path("--out", "relative-here.json");
}

TEST(OutputFileCheck, TwoOutputsOnOneFileOrBothOnStdoutAreRefused) {
  TempDir dir;
  EXPECT_EQ(error_of([&] {
              check_distinct_outputs({{"--out", dir.file("a")}, {"--html", dir.path() + "/./a"}});
            }).exit_code(),
            kExitUsage);
  EXPECT_TRUE(contains(error_of([] {
                         check_distinct_outputs({{"--json", "-"}, {"--bmf", "/dev/stdout"}});
                       }).what(),
                       "both write to standard output"));
  check_distinct_outputs(
      {{"--json", "/dev/null"}, {"--bmf", "/dev/null"}, {"--github-benchmark", ""}});
  check_distinct_outputs({{"--json", dir.file("a")}, {"--bmf", dir.file("b")}});
}

}  // namespace
}  // namespace hb::reports
