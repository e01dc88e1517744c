#pragma once
// End-to-end CLI tests: runs the built binary (HB_BINARY) with a fresh temporary folder per test
// and returns the exit status, with standard output in stdout_ and both streams in out_. Skips when
// the binary has not been built (a folder's test binary does not depend on it). Shared by every
// folder's CLI tests.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
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
    const std::string cmd =
        std::string(HB_BINARY) + " " + args + " > " + file("out.txt") + " 2> " + file("err.txt");
    const int st = std::system(cmd.c_str());
    stdout_ = slurp(file("out.txt"));
    out_ = stdout_ + slurp(file("err.txt"));
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }
  std::string dir_, out_, stdout_;
};

}  // namespace hb::cli_test
