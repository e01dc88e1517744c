#include "reports/json_io.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "fixtures.h"

namespace hb::reports {
namespace {

namespace fs = std::filesystem;
using testing::make_report;
using testing::TempDir;

void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// Asserts that reading `text` fails with a message containing every piece of `expect`.
void expect_read_error(const std::string& text, std::initializer_list<std::string> expect) {
  try {
    from_json_text(text, "broken.json");
    FAIL() << "no error for: " << text.substr(0, 200);
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(e.exit_code(), kExitUsage);
    EXPECT_FALSE(e.fix().empty());
    EXPECT_NE(msg.find("broken.json"), std::string::npos) << msg;
    for (const auto& piece : expect)
      EXPECT_NE(msg.find(piece), std::string::npos) << "'" << piece << "' not in: " << msg;
  }
}

TEST(ReportJson, RoundTripIsExact) {
  Report r = make_report();
  r.points[0].traffic_per_step.weight_bytes = 436'207'616;  // scope layer's weights
  const std::string text = to_json_text(r);
  const Report back = from_json_text(text, "mem");
  EXPECT_EQ(to_json_text(back), text);  // every field survives, doubles bit-exact

  ASSERT_EQ(back.points.size(), r.points.size());
  const Point& p = back.points[0];
  EXPECT_EQ(p.axes, r.points[0].axes);
  EXPECT_EQ(p.step.samples_ns, r.points[0].step.samples_ns);
  EXPECT_EQ(p.step.summary.median, r.points[0].step.summary.median);
  EXPECT_EQ(p.traffic_per_step, r.points[0].traffic_per_step);
  EXPECT_EQ(p.placement[0].observed_pages_per_node,
            r.points[0].placement[0].observed_pages_per_node);
  EXPECT_EQ(p.trajectory, r.points[0].trajectory);
  EXPECT_EQ(p.accuracy.needle_success_rate, -1);
  EXPECT_EQ(back.points.back().status, PointStatus::oom);
  EXPECT_EQ(back.points.back().reason, r.points.back().reason);
  EXPECT_EQ(back.context.accelerator.name, r.context.accelerator.name);
  EXPECT_EQ(back.context.topology.nodes[0].size_bytes, int64_t(8) << 30);
  EXPECT_EQ(back.speedups.size(), r.speedups.size());
}

TEST(ReportJson, ModeledAlongsideRoundTripsAndIsOptional) {
  Report r = make_report();
  Point& p = r.points[0];
  p.modeled.platform = "this-machine";
  p.modeled.overlap = "cpu|accelerator > transfer > sync";
  p.modeled.step = Timing::from_samples({1000, 1100, 1200});
  p.modeled.phase_median_ns = {{"cpu", 800}, {"sync", 50}};
  p.modeled.error_vs_measured = -0.125;
  const std::string text = to_json_text(r);
  const Report back = from_json_text(text, "mem");
  EXPECT_EQ(to_json_text(back), text);
  EXPECT_EQ(back.points[0].modeled.platform, "this-machine");
  EXPECT_EQ(back.points[0].modeled.step.samples_ns, p.modeled.step.samples_ns);
  EXPECT_EQ(back.points[0].modeled.phase_median_ns, p.modeled.phase_median_ns);
  EXPECT_DOUBLE_EQ(back.points[0].modeled.error_vs_measured, -0.125);
  EXPECT_FALSE(back.points[1].modeled.present());  // absent member: no prediction
  EXPECT_EQ(to_json_text(make_report()).find("\"modeled\": {"), std::string::npos);
  // A prediction with an empty platform name is a broken file.
  std::string broken = text;
  const std::string named = "\"platform\": \"this-machine\"";
  broken.replace(broken.find(named), named.size(), "\"platform\": \"\"");
  expect_read_error(broken, {"platform"});
}

TEST(ReportJson, PassSizesRoundTripAndMustCoverTheSamples) {
  Report r = make_report();
  const int64_t n = static_cast<int64_t>(r.points[0].step.samples_ns.size());
  r.points[0].step.pass_sizes = {n - 10, 10};
  const std::string text = to_json_text(r);
  const Report back = from_json_text(text, "mem");
  EXPECT_EQ(back.points[0].step.pass_sizes, r.points[0].step.pass_sizes);
  EXPECT_EQ(back.points[0].step.pass_medians().size(), 2u);
  EXPECT_TRUE(back.points[1].step.pass_sizes.empty());  // single pass: the member is absent
  r.points[0].step.pass_sizes = {n - 10, 9};            // one sample unaccounted for
  expect_read_error(to_json_text(r), {"pass_sizes", "passes hold"});
}

TEST(ReportJson, RepetitionRoundsRoundTripAndMustCoverTheRounds) {
  Report r = make_report();
  const int64_t n = static_cast<int64_t>(r.points[0].step.samples_ns.size());
  r.points[0].step.pass_sizes = {n - 12, 4, 4, 4};
  r.points[0].step.repetition_rounds = {2, 2};
  Speedup s;
  s.group_key = "g";
  s.strategy_a = "a";
  s.strategy_b = "b";
  s.ratio = 1.2;
  s.ci_low = 1.1;
  s.ci_high = 1.3;
  s.ci_coverage = 0.95;
  s.rounds = 4;
  s.passes = 2;
  r.speedups = {s};
  const Report back = from_json_text(to_json_text(r), "mem");
  EXPECT_EQ(back.points[0].step.repetition_rounds, r.points[0].step.repetition_rounds);
  EXPECT_TRUE(back.points[1].step.repetition_rounds.empty());  // one pass: the member is absent
  ASSERT_EQ(back.speedups.size(), 1u);
  EXPECT_EQ(back.speedups[0].passes, 2);
  r.points[0].step.repetition_rounds = {2, 1};  // a round no pass holds
  expect_read_error(to_json_text(r), {"repetition_rounds", "passes hold 3 rounds"});
  r.points[0].step.repetition_rounds = {4, 0};
  expect_read_error(to_json_text(r), {"repetition_rounds", "at least one round"});
}

TEST(ReportJson, KvFitFractionRoundTripsAndIsOptional) {
  Report r = make_report();
  r.points[0].kv_fit_fraction = 0.253;
  r.points[1].kv_fit_fraction = 1.0;
  const std::string text = to_json_text(r);
  EXPECT_NE(text.find("\"kv_fit_fraction\": 0.253"), std::string::npos);
  const Report back = from_json_text(text, "mem");
  EXPECT_EQ(back.points[0].kv_fit_fraction, 0.253);
  EXPECT_EQ(back.points[1].kv_fit_fraction, 1.0);
  EXPECT_FALSE(back.points[2].kv_fit_fraction.has_value());  // not set: the member is absent
  EXPECT_EQ(to_json_text(back), text);
  // A report written before the field existed reads, without it.
  nlohmann::json old = nlohmann::json::parse(text);
  for (auto& p : old["points"]) p.erase("kv_fit_fraction");
  const Report older = from_json_text(old.dump(), "old.json");
  EXPECT_FALSE(older.points[0].kv_fit_fraction.has_value());
  // A share outside [0, 1] is refused with the field's path.
  r.points[0].kv_fit_fraction = 1.5;
  expect_read_error(to_json_text(r), {"kv_fit_fraction", "from 0 to 1"});
}

// Issue 17: a strategy's warnings and the rel L2 against a trace's captured outputs are written
// only where present and read back; files without them read as before.
TEST(ReportJson, PointWarningsAndCapturedRelL2RoundTripAndAreOptional) {
  Report r = make_report();
  ASSERT_GT(r.points[0].accuracy.steps_scored, 0);
  r.points[0].warnings = {"h2o: no prompt queries", "second"};
  r.points[0].accuracy.captured_rel_l2 = 2.5e-7;
  r.points[0].accuracy.recall_per_step = {{3, 0.75}, {4, 0.5}};
  const std::string text = to_json_text(r);
  const Report back = from_json_text(text, "mem");
  EXPECT_EQ(back.points[0].warnings, r.points[0].warnings);
  EXPECT_EQ(back.points[0].accuracy.captured_rel_l2, 2.5e-7);
  ASSERT_EQ(back.points[0].accuracy.recall_per_step.size(), 2u);
  EXPECT_EQ(back.points[0].accuracy.recall_per_step[1].step, 4);
  EXPECT_EQ(back.points[0].accuracy.recall_per_step[1].recall, 0.5);
  EXPECT_TRUE(back.points[1].accuracy.recall_per_step.empty());
  EXPECT_TRUE(back.points[1].warnings.empty());
  EXPECT_FALSE(back.points[1].accuracy.captured_rel_l2.has_value());
  EXPECT_EQ(to_json_text(back), text);
  const nlohmann::json j = nlohmann::json::parse(text);
  EXPECT_FALSE(j["points"][1].contains("warnings"));
  EXPECT_FALSE(j["points"][1]["accuracy"].contains("captured_rel_l2"));
  EXPECT_FALSE(j["points"][1]["accuracy"].contains("recall_per_step"));
}

TEST(ReportJson, UnitsAreInFieldNamesAndSchemaComesFirst) {
  const std::string text = to_json_text(make_report());
  EXPECT_EQ(text.rfind("{\n  \"schema\": \"hybridbench.report/2\"", 0), 0u) << text.substr(0, 80);
  for (const char* f :
       {"\"samples_ns\"", "\"median_ns\"", "\"capacity_bytes\"", "\"h2d_bytes\"", "\"size_bytes\""})
    EXPECT_NE(text.find(f), std::string::npos) << f;
}

// Found by fuzz_hwloc_xml: text from outside (a host name, hwloc's strings) may not be UTF-8;
// writing must replace the bytes, not throw while finished results are being saved.
TEST(ReportJson, TextThatIsNotUtf8IsReplacedNotFatal) {
  Report r = make_report();
  r.context.host = "bad\xff\xfe";
  std::string text;
  ASSERT_NO_THROW(text = to_json_text(r));
  EXPECT_NE(text.find("bad\xEF\xBF\xBD"), std::string::npos);
  EXPECT_EQ(from_json_text(text, "x.json").context.host, "bad\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST(ReportJson, NaNAccuracyIsWrittenAsNullAndReadBack) {
  Report r = make_report();
  r.points[0].accuracy.rel_l2 = std::numeric_limits<double>::quiet_NaN();
  r.points[0].accuracy.needle_success_rate = 0.75;
  const Report back = from_json_text(to_json_text(r), "mem");
  EXPECT_TRUE(std::isnan(back.points[0].accuracy.rel_l2));
  EXPECT_EQ(back.points[0].accuracy.needle_success_rate, 0.75);
}

TEST(ReportJson, WritingRejectsUnknownVocabulary) {
  Report r = make_report();
  r.points[1].status = static_cast<PointStatus>(9);  // no such status
  EXPECT_THROW(to_json_text(r), Error);
  r = make_report();
  r.points[1].step.stop_reason = static_cast<StopReason>(9);  // no such reason
  EXPECT_THROW(to_json_text(r), Error);
}

TEST(ReportJson, AtomicWriteReplacesAndLeavesNoTemporaries) {
  TempDir dir;
  const std::string path = dir.file("run.json");
  write_text(path, "old content");
  write_report(path, make_report());
  EXPECT_EQ(read_report(path).points.size(), make_report().points.size());
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir.path())) {
    ++files;
    EXPECT_EQ(e.path().filename(), "run.json");
  }
  EXPECT_EQ(files, 1);
  EXPECT_NE(fs::status(path).permissions() & fs::perms::owner_read, fs::perms::none);
}

TEST(ReportJson, WriteIntoMissingDirectoryFailsClearly) {
  try {
    write_report("/nonexistent-dir-hb/run.json", make_report());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitFailure);
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir-hb"), std::string::npos);
  }
}

TEST(ReportJsonErrors, MissingFile) {
  try {
    read_report("/nonexistent-dir-hb/run.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir-hb/run.json"), std::string::npos);
  }
}

TEST(ReportJsonErrors, TruncatedFile) {
  const std::string text = to_json_text(make_report());
  expect_read_error(text.substr(0, text.size() / 2), {"not valid JSON", "truncated"});
  expect_read_error("", {"not valid JSON", "the file is empty"});
}

// A NaN or infinity (which other tools write, and JSON cannot hold) is named with the field.
TEST(ReportJsonErrors, NonFiniteNumberIsNamedByItsPath) {
  const std::string text = to_json_text(make_report());
  for (const std::string token : {"NaN", "Infinity", "-Infinity", "nan", "-inf"}) {
    std::string bad = text;
    const std::string key = "\"median_ns\": ";
    const size_t at = bad.find(key) + key.size();
    bad.replace(at, bad.find_first_of(",\n", at) - at, token);
    expect_read_error(bad,
                      {"$.points[0].step.summary.median_ns: " + token, "is not a finite number"});
  }
}

TEST(ReportJsonErrors, TruncatedFileOnDiskNamesThePath) {
  TempDir dir;
  const std::string path = dir.file("cut.json");
  const std::string text = to_json_text(make_report());
  write_text(path, text.substr(0, 1000));
  try {
    read_report(path);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos);
  }
}

TEST(ReportJsonErrors, ForeignJson) {
  expect_read_error(R"({"benchmarks": []})", {"not a hybridbench report"});
  expect_read_error(R"([1, 2, 3])", {"not a hybridbench report"});
  expect_read_error(R"({"schema": "bencher/1"})", {"not a hybridbench report schema"});
}

// Found by fuzz_report_json: valid JSON syntax whose number overflows a double is refused by
// the parser with out_of_range, not parse_error; it must still be a clear error, not a crash.
TEST(ReportJsonErrors, NumberBeyondDoubleRange) {
  std::string text = to_json_text(make_report());
  text.replace(text.find("hybridbench.report/2\""), 21, "hybridbench.report/2\", \"x\": 2.19e324");
  expect_read_error(text, {"$.x: the number 2.19e324 is beyond the range of a double"});
  expect_read_error("[2.197224951372e324]", {"$[0]: the number", "beyond the range"});
}

TEST(ReportJsonErrors, WrongVersion) {
  std::string text = to_json_text(make_report());
  text.replace(text.find("hybridbench.report/2"), 20, "hybridbench.report/9");
  expect_read_error(text, {"hybridbench.report/9", "cannot read",
                           "\"hybridbench.report/1\" to "
                           "\"hybridbench.report/2\""});
}

// Schema 2: context.sweep values are JSON numbers, booleans and arrays where their text is one
// exactly, and read back as the same text (the resume check and the tables compare text).
TEST(ReportJson, SweepValuesAreTypedAndReadBackAsTheSameText) {
  Report r = make_report();
  r.context.sweep = {
      {"seq_lens", "256,512"}, {"decode_steps", "4"},      {"max_noise_fraction", "0.05"},
      {"min_time_s", "0"},     {"old_style", "0.050000"},  {"padded", "007"},
      {"flag", "true"},        {"kv_budget", "64,25%"},    {"models", "a"},
      {"strategies", ""},      {"workload", "llama-like"}, {"tiny", "1e-05"}};
  const std::string text = to_json_text(r);
  const auto sweep = nlohmann::ordered_json::parse(text)["context"]["sweep"];
  EXPECT_EQ(sweep["seq_lens"], nlohmann::ordered_json::parse("[256, 512]"));
  EXPECT_TRUE(sweep["decode_steps"].is_number_integer());
  EXPECT_EQ(sweep["max_noise_fraction"].get<double>(), 0.05);
  EXPECT_TRUE(sweep["min_time_s"].is_number());
  EXPECT_TRUE(sweep["old_style"].is_string());  // would not round-trip as a number
  EXPECT_TRUE(sweep["padded"].is_string());
  EXPECT_EQ(sweep["flag"], true);
  EXPECT_EQ(sweep["kv_budget"], nlohmann::ordered_json::parse(R"([64, "25%"])"));
  EXPECT_EQ(sweep["models"], nlohmann::ordered_json::parse(R"(["a"])"));
  EXPECT_EQ(sweep["strategies"], nlohmann::ordered_json::array());
  EXPECT_TRUE(sweep["tiny"].is_number_float());
  EXPECT_EQ(from_json_text(text, "mem").context.sweep, r.context.sweep);

  // A value that is neither (an object) is refused, naming the JSON path.
  auto j = nlohmann::ordered_json::parse(text);
  j["context"]["sweep"]["seq_lens"] = {{"a", 1}};
  expect_read_error(j.dump(), {"$.context.sweep.seq_lens", "expected"});
}

// Version 1 files (every sweep value a string) still read, as the version rules promise.
TEST(ReportJson, SchemaVersion1StillReads) {
  auto j = nlohmann::ordered_json::parse(to_json_text(make_report()));
  j["schema"] = "hybridbench.report/1";
  j["context"]["sweep"] = {{"seq_lens", "4096,8192"}, {"max_noise", "0.050000"}};
  const Report back = from_json_text(j.dump(), "old.json");
  EXPECT_EQ(back.context.sweep.at("seq_lens"), "4096,8192");
  EXPECT_EQ(back.context.sweep.at("max_noise"), "0.050000");
  EXPECT_EQ(back.schema, "hybridbench.report/1");
  // Written again, it is a version 2 file (what this writer writes), typed.
  const auto again = nlohmann::ordered_json::parse(to_json_text(back));
  EXPECT_EQ(again["schema"], "hybridbench.report/2");
  EXPECT_EQ(again["context"]["sweep"]["seq_lens"], nlohmann::ordered_json::parse("[4096, 8192]"));
  // In version 1 a sweep value had to be a string.
  j["context"]["sweep"]["seq_lens"] = 4096;
  expect_read_error(j.dump(), {"$.context.sweep.seq_lens", "expected a string"});
}

// Edits the serialised report as JSON, then expects the reader to name `path_piece`.
void expect_edit_error(const std::function<void(nlohmann::ordered_json&)>& edit,
                       std::initializer_list<std::string> expect) {
  auto j = nlohmann::ordered_json::parse(to_json_text(make_report()));
  edit(j);
  expect_read_error(j.dump(), expect);
}

TEST(ReportJsonErrors, MissingFieldNamesTheJsonPath) {
  expect_edit_error([](auto& j) { j["points"][2]["step"].erase("samples_ns"); },
                    {"$.points[2].step", "missing field \"samples_ns\""});
  expect_edit_error([](auto& j) { j.erase("context"); }, {"$", "missing field \"context\""});
  expect_edit_error([](auto& j) { j["context"]["accelerator"].erase("capacity_bytes"); },
                    {"$.context.accelerator", "capacity_bytes"});
}

TEST(ReportJsonErrors, WrongTypeNamesTheJsonPath) {
  expect_edit_error([](auto& j) { j["points"][1]["axes"]["seq_len"] = "4k"; },
                    {"$.points[1].axes.seq_len", "expected an integer, found a string"});
  expect_edit_error([](auto& j) { j["points"][0]["step"]["samples_ns"][3] = "x"; },
                    {"$.points[0].step.samples_ns[3]", "expected a number"});
  expect_edit_error([](auto& j) { j["points"] = nlohmann::ordered_json::object(); },
                    {"$.points", "expected an array, found an object"});
}

TEST(ReportJsonErrors, BadValuesAreRejected) {
  expect_edit_error([](auto& j) { j["points"][0]["status"] = "crashed"; },
                    {"$.points[0].status", "\"crashed\" is not one of"});
  expect_edit_error([](auto& j) { j["points"][0]["step"]["samples_ns"].erase(0); },
                    {"$.points[0].step.summary.count", "samples"});
  expect_edit_error(
      [](auto& j) { j["points"][0]["traffic_per_step"]["bytes_read"]["cpu"]["tape"] = 1; },
      {"$.points[0].traffic_per_step.bytes_read.cpu.tape", "unknown memory kind"});
}

// Status and provenance are enums inside the program: a name outside their vocabularies is
// refused where the text is read, naming the field and what is allowed (exit 2).
TEST(ReportJsonErrors, UnknownProvenanceAndHostStatusAreRejected) {
  expect_edit_error(
      [](auto& j) { j["points"][1]["provenance"] = "guessed"; },
      {"$.points[1].provenance", "\"guessed\" is not one of: measured, emulated, modeled"});
  expect_edit_error([](auto& j) { j["speedups"][0]["provenance"] = "Measured"; },
                    {"$.speedups[0].provenance", "\"Measured\" is not one of"});
  Report fleet = make_report();
  fleet.context.hosts.push_back(HostRecord{});
  auto j = nlohmann::ordered_json::parse(to_json_text(fleet));
  j["context"]["hosts"][0]["status"] = "lost";
  expect_read_error(j.dump(), {"$.context.hosts[0].status", "\"lost\" is not one of: ok, error"});
  EXPECT_EQ(from_json_text(to_json_text(fleet), "mem").context.hosts.at(0).status, HostStatus::ok);
}

// Stop reasons and the accelerator kind are enums too: an unknown name is refused where it is
// read; an empty accelerator kind (a fleet rank that failed before it made one) reads as unknown.
TEST(ReportJsonErrors, UnknownStopReasonAndAcceleratorKindAreRejected) {
  expect_edit_error(
      [](auto& j) { j["points"][0]["step"]["stop_reason"] = "tired"; },
      {"$.points[0].step.stop_reason", "\"tired\" is not one of: noise, max-steps, timeout, none"});
  expect_edit_error([](auto& j) { j["context"]["accelerator"]["kind"] = "tpu"; },
                    {"$.context.accelerator.kind", "\"tpu\" is not one of: cpu, cuda"});
  expect_edit_error([](auto& j) { j["context"]["accelerator"]["kind"] = "auto"; },
                    {"$.context.accelerator.kind", "\"auto\" is not one of: cpu, cuda"});
  Report r = make_report();
  EXPECT_EQ(from_json_text(to_json_text(r), "mem").context.accelerator.kind, AcceleratorKind::cpu);
  EXPECT_EQ(from_json_text(to_json_text(r), "mem").points[0].step.stop_reason, StopReason::noise);
  r.context.accelerator.kind.reset();
  EXPECT_EQ(from_json_text(to_json_text(r), "mem").context.accelerator.kind, std::nullopt);
}

// "min-samples" and "min-time" were in the first vocabulary though nothing produced them; a
// file that holds one loads as the limit of its kind (a step count, a time), still unconverged.
TEST(ReportJson, RetiredStopReasonsLoadAsTheLimitOfTheirKind) {
  for (const auto& [old, now] : {std::pair{"min-samples", StopReason::max_steps},
                                 std::pair{"min-time", StopReason::timeout}}) {
    auto j = nlohmann::ordered_json::parse(to_json_text(make_report()));
    j["points"][0]["step"]["stop_reason"] = old;
    const Report r = from_json_text(j.dump(), "old.json");
    EXPECT_EQ(r.points[0].step.stop_reason, now) << old;
    // Written back under the current name.
    EXPECT_EQ(nlohmann::ordered_json::parse(to_json_text(r))["points"][0]["step"]["stop_reason"],
              to_string(now));
  }
}

TEST(ReportJson, UnknownExtraFieldsAreIgnored) {
  auto j = nlohmann::ordered_json::parse(to_json_text(make_report()));
  j["points"][0]["future_field"] = 42;
  EXPECT_NO_THROW(from_json_text(j.dump(), "mem"));
}

}  // namespace
}  // namespace hb::reports
