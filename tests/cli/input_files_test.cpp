// Every file a command reads is bounded and validated, and no command writes over its own input
// (core/input_file.h, reports/schema.cpp, reports/output_file.h): a FIFO, a device or a folder
// is refused at once (exit 2, naming the file), a report with a value no run can produce is
// refused naming the field's JSON path, and an output that is an input (or lies in an input
// tree) is refused before anything is written. Each run is under a 30 s timeout and an 8 GB
// address-space cap, so a hang or an unbounded read fails the test, not the machine.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/child_process.h"
#include "tests/cli_fixture.h"

namespace hb::cli {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

using hb::test::kAddressSanitizer;

// A real one-point report of `run` (cpu-only on the cpu accelerator, 3 samples).
const std::string kReportSeed =
    std::string(HB_SOURCE_DIR) + "/tests/fuzz/corpus/fuzz_report_json/measured-one-point-v2.json";
const std::string kSysfsFixture = std::string(HB_SOURCE_DIR) + "/tests/memtier/fixtures/hmat-tier";

class InputFiles : public hb::cli_test::CliTest {
 protected:
  // Runs hybridbench bounded in time and memory; the exit status (124: timed out).
  int run_bounded(const std::string& args) {
    const std::string cap = kAddressSanitizer ? "" : "ulimit -v 8000000; ";
    const std::string cmd = "bash -c '" + cap + "exec timeout 30 " + std::string(HB_BINARY) + " " +
                            args + "' > " + file("out.txt") + " 2>&1";
    const int st = std::system(cmd.c_str());
    out_ = slurp(file("out.txt"));
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }
  // Exit 2 with every needle in the output, and never an internal error.
  void expect_refused(const std::string& args, const std::vector<std::string>& needles) {
    EXPECT_EQ(run_bounded(args), 2) << args << "\n" << out_;
    for (const auto& n : needles)
      EXPECT_NE(out_.find(n), std::string::npos) << args << ": no '" << n << "' in\n" << out_;
    EXPECT_EQ(out_.find("internal error"), std::string::npos) << args << "\n" << out_;
  }
  static json seed() { return json::parse(std::ifstream(kReportSeed)); }
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(file(name), std::ios::binary) << text;
    return file(name);
  }
  std::string write_report(const std::string& name, const json& j) {
    return write(name, j.dump(2));
  }
  // The seed with one edit, refused by `report` and by `compare` naming `needles`.
  void expect_report_refused(const std::string& name, const std::function<void(json&)>& edit,
                             const std::vector<std::string>& needles) {
    json j = seed();
    edit(j);
    const std::string bad = write_report(name, j);
    const std::string good = write_report("good.json", seed());
    expect_refused("report " + bad, needles);
    expect_refused("compare " + good + " " + bad, needles);
  }
  std::string fifo(const std::string& name) {
    const std::string p = file(name);
    EXPECT_EQ(::mkfifo(p.c_str(), 0600), 0) << p;
    return p;
  }
  std::string copy_sysfs_tree() {
    const std::string root = file("tree");
    fs::copy(kSysfsFixture, root, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    return root;
  }
};

json& point(json& j) { return j["points"][0]; }
json& samples(json& j) { return point(j)["step"]["samples_ns"]; }

TEST_F(InputFiles, ReportsAreReadOnlyFromRegularFilesOfBoundedSize) {
  const std::string good = write_report("good.json", seed());
  ASSERT_EQ(run_bounded("report " + good), 0) << out_;
  expect_refused("report /dev/zero", {"/dev/zero", "character device"});
  expect_refused("compare /dev/urandom " + good, {"/dev/urandom", "character device"});
  expect_refused("report " + fifo("pipe.json"), {"pipe.json", "FIFO"});
  expect_refused("compare " + good + " " + file("pipe.json"), {"pipe.json", "FIFO"});
  fs::create_directory(file("folder"));
  expect_refused("report " + file("folder"), {"folder", "is a folder, not a file"});
  EXPECT_EQ(out_.find("truncated"), std::string::npos) << out_;
}

TEST_F(InputFiles, OtherReadersRefuseFifosAndDevices) {
  expect_refused("topo --platform " + fifo("profile.json"), {"profile.json", "FIFO"});
  expect_refused("run --mode model --platform /dev/zero --seq-len 1k", {"/dev/zero", "device"});
  expect_refused("run --config " + fifo("config.json"), {"config.json", "FIFO"});
  expect_refused("topo --topology " + fifo("t.xml"), {"t.xml", "FIFO"});
}

TEST_F(InputFiles, SamplesOutOfRangeAreRefusedByField) {
  const std::string where = "$.points[0].step.samples_ns[0]";
  expect_report_refused("negative.json", [](json& j) { samples(j)[0] = -5.0; }, {where});
  expect_report_refused("zero.json", [](json& j) { samples(j)[0] = 0.0; }, {where, "0 ns"});
  expect_report_refused("huge.json", [](json& j) { samples(j)[0] = 1e308; }, {where, "1e+308"});
}

TEST_F(InputFiles, SummaryInconsistentWithSamplesIsRefused) {
  expect_report_refused("median.json",
                        [](json& j) {
                          auto& m = point(j)["step"]["summary"]["median_ns"];
                          m = m.get<double>() * 2;
                        },
                        {"$.points[0].step.summary.median_ns", "samples_ns give"});
}

TEST_F(InputFiles, AccuracyAndAxesOutOfRangeAreRefusedByField) {
  expect_report_refused("recall.json", [](json& j) { point(j)["accuracy"]["mass_recall"] = 1.7; },
                        {"$.points[0].accuracy.mass_recall", "1.7"});
  expect_report_refused("cosine.json", [](json& j) { point(j)["accuracy"]["cosine"] = -3; },
                        {"$.points[0].accuracy.cosine", "-3"});
  expect_report_refused("seq_len.json", [](json& j) { point(j)["axes"]["seq_len"] = -1024; },
                        {"$.points[0].axes.seq_len", "-1024"});
  expect_report_refused("traffic.json",
                        [](json& j) { point(j)["traffic_per_step"]["h2d_bytes"] = -1; },
                        {"$.points[0].traffic_per_step.h2d_bytes"});
}

TEST_F(InputFiles, DuplicateAndEmptyOkPointsAreRefused) {
  expect_report_refused("dup.json", [](json& j) { j["points"].push_back(j["points"][0]); },
                        {"$.points[1]", "the same point as $.points[0]"});
  expect_report_refused("empty.json",
                        [](json& j) {
                          samples(j) = json::array();
                          for (auto& [k, v] : point(j)["step"]["summary"].items()) v = 0;
                          point(j)["step"].erase("pass_sizes");
                          point(j)["step"].erase("round_slots");
                        },
                        {"$.points[0].step.samples_ns", "at least one sample"});
}

// An empty name would label a table row and group points by nothing; a key given twice would
// keep one value silently (nlohmann keeps the last), dropping half a report unseen.
TEST_F(InputFiles, EmptyNamesAndDuplicateKeysAreRefused) {
  expect_report_refused("nameless.json", [](json& j) { point(j)["axes"]["strategy"] = ""; },
                        {"$.points[0].axes.strategy", "empty string"});
  std::string text = seed().dump(1);
  const size_t at = text.find("\n \"points\":");
  ASSERT_NE(at, std::string::npos);
  text.insert(at + 1, " \"points\": [],\n");
  const std::string bad = write("twice.json", text);
  const std::string good = write_report("good.json", seed());
  expect_refused("report " + bad, {"duplicate key \"points\"", "twice.json"});
  expect_refused("compare " + good + " " + bad, {"duplicate key \"points\""});
}

// A page that cannot be written leaves no table file behind: the outputs are written as one.
TEST_F(InputFiles, AFailedPageLeavesNoTableFile) {
  const std::string good = write_report("good.json", seed());
  EXPECT_EQ(run_bounded("report " + good + " --html /dev/full --out " + file("o.md")), 1) << out_;
  EXPECT_FALSE(fs::exists(file("o.md"))) << out_;
  EXPECT_EQ(run_bounded("compare " + good + " " + good + " --json /dev/full --out " + file("c.md")),
            1)
      << out_;
  EXPECT_FALSE(fs::exists(file("c.md"))) << out_;
  for (const auto& e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().filename().string().rfind(".", 0), std::string::npos) << e.path();
}

TEST_F(InputFiles, UnreadableAccuracyTargetIsRefusedNotReplaced) {
  expect_report_refused("target.json",
                        [](json& j) { j["context"]["sweep"]["accuracy_target"] = "recall:7"; },
                        {"$.context.sweep.accuracy_target", "recall:7"});
}

TEST_F(InputFiles, NonFiniteNumberIsNamedByField) {
  std::string text = seed().dump(2);
  const std::string key = "\"mass_recall\": ";
  const size_t at = text.find(key) + key.size();
  text.replace(at, text.find_first_of(",\n}", at) - at, "NaN");
  expect_refused("report " + write("nan.json", text),
                 {"$.points[0].accuracy.mass_recall", "NaN is not a finite number"});
  EXPECT_EQ(out_.find("damaged"), std::string::npos) << out_;
}

TEST_F(InputFiles, ProcurementRefusesTheSameReportTwice) {
  const std::string a = write_report("a.json", seed());
  const std::string b = write_report("b.json", seed());
  expect_refused("report --procurement " + a + " " + a, {"same report", "given twice"});
  expect_refused("report --procurement " + a + " " + b, {"b.json", "same report", "a.json"});
}

TEST_F(InputFiles, TopoNeverWritesOverItsInputs) {
  const std::string xml = file("t.xml");
  fs::copy_file(std::string(HB_TOPOLOGY_DIR) + "/cxlmem+dax.v2.xml", xml);
  const std::string before = slurp(xml);
  expect_refused("topo --topology " + xml + " --json " + xml, {"--json", "is the input"});
  EXPECT_EQ(slurp(xml), before);
  const std::string root = copy_sysfs_tree();
  const std::string online = root + "/sys/devices/system/node/online";
  const std::string online_before = slurp(online);
  expect_refused("topo --sysfs-root " + root + " --json " + online, {"--json", "input folder"});
  EXPECT_EQ(slurp(online), online_before);
  expect_refused("topo --sysfs-root " + root + " --json " + root + "/sys/new.json",
                 {"input folder"});
  EXPECT_FALSE(fs::exists(root + "/sys/new.json"));
  EXPECT_EQ(run_bounded("topo --sysfs-root " + root + " --json " + file("ok.json")), 0) << out_;
}

TEST_F(InputFiles, SysfsTreeWithAFifoOrNoOnlineNodeIsRefused) {
  const std::string root = copy_sysfs_tree();
  const std::string meminfo = root + "/sys/devices/system/node/node0/meminfo";
  fs::remove(meminfo);
  ASSERT_EQ(::mkfifo(meminfo.c_str(), 0600), 0);
  expect_refused("topo --sysfs-root " + root, {"node0/meminfo", "FIFO"});
  fs::remove(meminfo);
  std::ofstream(root + "/sys/devices/system/node/online") << "\n";
  expect_refused("topo --sysfs-root " + root, {"online", "lists no online NUMA node"});
}

// Without /proc libnuma knows no node this process may use: the message says /proc is missing,
// not that node 0 does not exist. Needs a private mount namespace (root); skipped otherwise.
TEST_F(InputFiles, WithoutProcTheNumaCheckSaysWhatIsMissing) {
  if (std::system("unshare -m --propagation private true > /dev/null 2>&1") != 0)
    GTEST_SKIP() << "no private mount namespace here (unshare -m needs root)";
  const std::string cmd =
      "unshare -m --propagation private bash -c 'umount -l /proc && exec "
      "timeout 30 " +
      std::string(HB_BINARY) +
      " run -q --model qwen2.5-0.5b --seq-len 256 --decode-steps 4 "
      "--strategy cpu-only --accelerator cpu --kv-node 0 --out " +
      file("r.json") + "' > " + file("out.txt") + " 2>&1";
  const int st = std::system(cmd.c_str());
  out_ = slurp(file("out.txt"));
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) != 0) << out_;
  EXPECT_NE(out_.find("/proc/self/status is not readable"), std::string::npos) << out_;
  EXPECT_EQ(out_.find("does not exist"), std::string::npos) << out_;
}

}  // namespace
}  // namespace hb::cli
