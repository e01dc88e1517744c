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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

namespace hb::cli_test {

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
  // Exit 77: python3-jsonschema is absent, so nothing is checked (the `schema` CTest says why).
  static void validate_reports(const std::string& paths) {
    static const bool available =
        std::system("/usr/bin/python3 -c 'import jsonschema' > /dev/null 2>&1") == 0;
    if (!available) return;
    const int st = std::system((validator() + paths + " 2>&1").c_str());
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
        << "a report the command wrote does not validate against reports/schema/"
           "report.schema.json (errors above):"
        << paths;
  }
};

}  // namespace hb::cli_test
