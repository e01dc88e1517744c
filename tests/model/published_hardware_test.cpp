// The presets of the hardware papers publish measurements on (Quest's RTX 6000 Ada, ShadowKV's
// A100 80GB SXM, InfiniGen's A6000 machine, FlexGen's T4 host, the RTX 4090): each loads under
// the name scripts rely on, carries the figures its source gives, and runs in model mode.
#include <algorithm>
#include <string>

#include <gtest/gtest.h>

#include "model/platform_model.h"
#include "reports/json_io.h"
#include "tests/cli_fixture.h"

namespace hb::model {
namespace {

constexpr const char* kPublishedHardware[] = {"a100-80gb-sxm", "rtx6000-ada", "rtx4090",
                                              "a6000-pcie3-xeon6136", "t4-pcie3"};

TEST(PublishedHardware, EachPresetLoadsWithItsDatasheetFigures) {
  const auto names = preset_names();
  for (const char* n : kPublishedHardware) {
    SCOPED_TRACE(n);
    ASSERT_NE(std::find(names.begin(), names.end(), n), names.end());
    const PlatformModel m = load_platform_model(n);
    EXPECT_EQ(m.name, n);
    EXPECT_EQ(m.source, PlatformSource::preset);
    for (const auto& [key, text] : m.sources) EXPECT_GT(text.size(), 10u) << key;
  }
  auto gbps = [](const char* n) { return load_platform_model(n).accelerator.memory_gbps; };
  EXPECT_DOUBLE_EQ(gbps("a100-80gb-sxm"), 2039);
  EXPECT_DOUBLE_EQ(gbps("rtx6000-ada"), 960);
  EXPECT_DOUBLE_EQ(gbps("rtx4090"), 1008);
  EXPECT_DOUBLE_EQ(gbps("a6000-pcie3-xeon6136"), 768);
  EXPECT_DOUBLE_EQ(gbps("t4-pcie3"), 320);
  EXPECT_EQ(load_platform_model("a100-80gb-sxm").accelerator.memory_bytes, int64_t{81920} << 20);
  // InfiniGen's machine: 12 Skylake cores, 96 GB of DDR4, a PCIe 3.0 link.
  const PlatformModel infinigen = load_platform_model("a6000-pcie3-xeon6136");
  EXPECT_EQ(infinigen.cpu.cores, 12);
  EXPECT_EQ(infinigen.tiers[0].capacity_bytes, int64_t{96} << 30);
  EXPECT_LT(infinigen.link().h2d_gbps, 16);
  // FlexGen's T4 host: its cost model's fitted CPU->GPU rate, 12.89 GiB/s, with that source.
  const PlatformModel flexgen = load_platform_model("t4-pcie3");
  EXPECT_NEAR(flexgen.link().h2d_gbps, 12.89 * 1.073741824, 0.01);
  EXPECT_NE(flexgen.sources.at("links[0].h2d_gbps").find("12.89 GiB/s"), std::string::npos);
  EXPECT_EQ(flexgen.sources.at("links[0].h2d_gbps").find("[estimate]"), std::string::npos);
  EXPECT_EQ(flexgen.tiers[0].capacity_bytes, int64_t{208} * 1000000000);
}

class PublishedHardwareCli : public cli_test::CliTest {};

TEST_F(PublishedHardwareCli, ModelModeRunsOnEveryPreset) {
  std::string list;
  for (const char* n : kPublishedHardware) list += (list.empty() ? "" : ",") + std::string(n);
  ASSERT_EQ(run("run --mode model --platform " + list +
                " --model llama-2-7b --seq-len 256 --strategy cpu-only,full-gpu --decode-steps 4 "
                "--warmup 1 --min-samples 2 --accuracy-steps 1 --accelerator-threads 1 "
                "--host-threads 1 -q --out " +
                file("r.json")),
            0)
      << out_;
  const reports::Report r = reports::read_report(file("r.json"));
  ASSERT_EQ(r.points.size(), 2 * std::size(kPublishedHardware));
  for (const auto& p : r.points) {
    SCOPED_TRACE(p.axes.key());
    EXPECT_EQ(p.provenance, reports::Provenance::modeled);
    EXPECT_EQ(p.status, reports::PointStatus::ok) << p.reason;
    EXPECT_GT(p.step.summary.median, 0);
  }
}

}  // namespace
}  // namespace hb::model
