#pragma once
// End-to-end CLI tests: runs the built binary (HB_BINARY) with a fresh temporary folder per test
// and returns the exit status, with standard output in stdout_ and both streams in out_. Skips when
// the binary has not been built (a folder's test binary does not depend on it). Shared by every
// folder's CLI tests.
//
// Every report a command writes into the test's folder (a new or rewritten *.json, or standard
// output, whose head says "schema": "hybridbench.report/...") is validated against the published
// schema (reports/schema/report.schema.json, tests/schema/validate_report.py) where Debian's
// python3-jsonschema is installed, so a writer change that breaks the schema fails the test that
// made the file.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace hb::cli_test {

// Splits a command line at blanks (the tests' arguments hold no quoted blanks).
inline std::vector<std::string> split_args(const std::string& s) {
  std::vector<std::string> v;
  std::istringstream in(s);
  for (std::string a; in >> a;) v.push_back(a);
  return v;
}

// How CliTest::start runs the binary in the background.
struct Background {
  std::string env;           // NAME=VALUE set for it, or empty
  long fsize_limit = -1;     // >= 0: caps the size of the files it writes (ulimit -f), bytes
  bool own_session = false;  // a session and process group of its own, as a shell starts a job
};

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(HB_BINARY)) GTEST_SKIP() << "hybridbench not built: " << HB_BINARY;
    std::string t = (std::filesystem::temp_directory_path() / "hb-cli-XXXXXX").string();
    dir_ = ::mkdtemp(t.data());
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  std::string file(const std::string& name) const {
    return (std::filesystem::path(dir_) / name).string();
  }
  std::string slurp(const std::string& path) const {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  // Runs hybridbench with `args` (in the current directory); returns the exit status, standard
  // output in stdout_, both streams in out_ (stdout first).
  int run(const std::string& args) {
    const auto before = json_files();
    const std::string cmd =
        std::string(HB_BINARY) + " " + args + " > " + file("out.txt") + " 2> " + file("err.txt");
    const int st = std::system(cmd.c_str());
    stdout_ = slurp(file("out.txt"));
    out_ = stdout_ + slurp(file("err.txt"));
    std::string written;
    for (const auto& [path, stamp] : json_files()) {
      auto was = before.find(path);
      if ((was == before.end() || was->second != stamp) && is_report(slurp(path)))
        written += " '" + path + "'";
    }
    if (is_report(stdout_)) written += " '" + file("out.txt") + "'";
    if (!written.empty()) validate_reports(written);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }
  // Starts hybridbench with `args` in the background, both streams to log.txt, so a test can
  // signal it; with own_session its pid is its process group's id.
  pid_t start(const std::string& args, const Background& how = {}) {
    std::vector<std::string> argv_s = split_args(args);
    argv_s.insert(argv_s.begin(), HB_BINARY);
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    const std::string log = file("log.txt");
    std::string env = how.env;
    const pid_t pid = ::fork();
    if (pid == 0) {  // only async-signal-safe calls until exec
      if (how.own_session) ::setsid();
      if (!env.empty()) ::putenv(env.data());
      if (how.fsize_limit >= 0) {
        const auto limit = static_cast<rlim_t>(how.fsize_limit);
        const struct rlimit lim { limit, limit };
        ::setrlimit(RLIMIT_FSIZE, &lim);
      }
      const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    return pid;
  }
  // Exit status of a started run (128 + signal when killed by one); its output in out_.
  int wait(pid_t pid) {
    int st = 0;
    ::waitpid(pid, &st, 0);
    out_ = slurp(file("log.txt"));
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  }
  std::string dir_, out_, stdout_;

 private:
  // *.json files of the test's folder with their modification time (ns) and size.
  std::map<std::string, std::pair<long long, long long>> json_files() const {
    std::map<std::string, std::pair<long long, long long>> m;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir_, ec)) {
      struct stat st {};
      const std::string p = e.path().string();
      if (e.path().extension() == ".json" && ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode))
        m[p] = {st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec, st.st_size};
    }
    return m;
  }
  static bool is_report(const std::string& text) {
    const std::string head = text.substr(0, 64);
    return head.find("\"schema\": \"hybridbench.report/") != std::string::npos ||
           head.find("\"schema\":\"hybridbench.report/") != std::string::npos;
  }
  static std::string validator() {
    return std::string("/usr/bin/python3 ") + HB_SOURCE_DIR + "/tests/schema/validate_report.py";
  }
  // Without python3-jsonschema nothing is checked (the `schema` CTest says why), unless
  // HB_REQUIRE_JSONSCHEMA=1 (scripts/test.sh, so CI) makes its absence a failure.
  static void validate_reports(const std::string& paths) {
    static const bool available =
        std::system("/usr/bin/python3 -c 'import jsonschema' > /dev/null 2>&1") == 0;
    if (!available) {
      const char* required = std::getenv("HB_REQUIRE_JSONSCHEMA");
      EXPECT_FALSE(required && std::string(required) == "1")
          << "python3-jsonschema is missing for /usr/bin/python3, and HB_REQUIRE_JSONSCHEMA=1 "
             "asks for it: apt-get install python3-jsonschema (scripts/install-deps.sh does)";
      return;
    }
    const int st = std::system((validator() + paths + " 2>&1").c_str());
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
        << "a report the command wrote does not validate against reports/schema/"
           "report.schema.json (errors above):"
        << paths;
  }
};

}  // namespace hb::cli_test
