// read_input_file reads regular files only, up to a cap, without ever blocking on a FIFO.
#include "core/input_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "core/error.h"

namespace hb {
namespace {

namespace fs = std::filesystem;

class InputFile : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string t = (fs::temp_directory_path() / "hb-input-XXXXXX").string();
    dir_ = ::mkdtemp(t.data());
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  // The refusal's text (problem and fix), with its exit status checked.
  static std::string refusal(const std::string& p, const InputKind& kind, int exit_code = 2) {
    try {
      read_input_file(p, kind);
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), exit_code) << e.what();
      return e.what();
    }
    ADD_FAILURE() << p << " was read";
    return {};
  }
  std::string dir_;
  const InputKind kind_{"report", 1024, "write one with `hybridbench run`"};
};

TEST_F(InputFile, ReadsARegularFileWhole) {
  std::ofstream(path("a.json")) << "{\"a\": 1}";
  EXPECT_EQ(read_input_file(path("a.json"), kind_), "{\"a\": 1}");
  std::ofstream(path("empty.json")).flush();
  EXPECT_EQ(read_input_file(path("empty.json"), kind_), "");
}

TEST_F(InputFile, MissingFileNamesItAndTheFix) {
  const std::string e = refusal(path("none.json"), kind_);
  EXPECT_NE(e.find("cannot read report " + path("none.json")), std::string::npos) << e;
  EXPECT_NE(e.find("hybridbench run"), std::string::npos) << e;
  EXPECT_EQ(read_input_file_if_present(path("none.json"), kind_), std::nullopt);
}

TEST_F(InputFile, FifoIsRefusedWithoutBlocking) {
  ASSERT_EQ(::mkfifo(path("pipe").c_str(), 0600), 0);
  const std::string e = refusal(path("pipe"), kind_);
  EXPECT_NE(e.find("is a FIFO"), std::string::npos) << e;
  EXPECT_THROW(read_input_file_if_present(path("pipe"), kind_), Error);
  EXPECT_THROW(check_input_file(path("pipe"), kind_), Error);
}

TEST_F(InputFile, DevicesAndFoldersAreRefused) {
  EXPECT_NE(refusal("/dev/zero", kind_).find("character device"), std::string::npos);
  EXPECT_NE(refusal("/dev/urandom", kind_).find("character device"), std::string::npos);
  const std::string e = refusal(dir_, kind_);
  EXPECT_NE(e.find("is a folder, not a file"), std::string::npos) << e;
  EXPECT_EQ(e.find("truncated"), std::string::npos) << e;
}

TEST_F(InputFile, FileOverTheCapIsRefused) {
  std::ofstream(path("big.json")) << std::string(1025, 'x');
  const std::string e = refusal(path("big.json"), kind_);
  EXPECT_NE(e.find("larger than 1024 bytes"), std::string::npos) << e;
  EXPECT_NE(e.find("the most a report may hold"), std::string::npos) << e;
  std::ofstream(path("fits.json")) << std::string(1024, 'x');
  EXPECT_EQ(read_input_file(path("fits.json"), kind_).size(), 1024u);
}

// procfs files report size 0 whatever they hold: the cap counts what is read.
TEST_F(InputFile, CapHoldsForFilesThatReportNoSize) {
  const InputKind tiny{"procfs file", 16, "-"};
  EXPECT_NE(refusal("/proc/self/status", tiny).find("larger than 16 bytes"), std::string::npos);
  EXPECT_FALSE(
      read_input_file("/proc/self/status", {"procfs file", kMaxPseudoFileBytes, "-"}).empty());
}

}  // namespace
}  // namespace hb
