// Issue 15's HybridGen repairs, driven directly: the output download counts in d2h_bytes; the
// [PORT] cpu_k_cap scores only the newest host tokens and stays one exact softmax over what it
// reports as attended (fp64 reference); promoted pages' scores are refreshed and cold ones go
// back to the host; the shipped rows go up in pieces as they are gathered.
#include <gtest/gtest.h>

#include <set>

#include "rig.h"
#include "tests/forwarding_accelerator.h"

namespace hb::test {
namespace {

const AttentionShape kShape{8, 2, 64, DType::f16};

TEST(HybridGenRepairs, OutputDownloadCountsInD2h) {
  Rig rig(kShape, 1000, 2, 1 << 20, {tier(MemoryKind::local_dram, 0)});
  auto hg = make_hybridgen({{"hybridgen.gpu_tokens", "128"}, {"hybridgen.scheduler", "static"}});
  ASSERT_EQ(hg->plan(rig.problem, rig.platform).status, PlanStatus::ok);
  hg->load();
  hg->prepare_step(0);
  StepResult out;
  hg->step(0, out);
  hg->fill_attended(0, out);
  // q down for the CPU side, o down for the caller: 8 heads x 64 fp32 each (no page moved).
  EXPECT_EQ(out.traffic.d2h_bytes, 2 * 8 * 64 * 4);
}

TEST(HybridGenRepairs, CpuKCapScoresOnlyTheNewestHostTokens) {
  Rig rig(kShape, 1000, 12, 1 << 20, {tier(MemoryKind::local_dram, 0)});
  auto hg = make_hybridgen({{"hybridgen.gpu_tokens", "128"},
                            {"hybridgen.scheduler", "static"},
                            {"hybridgen.hot_share", "0"},
                            {"hybridgen.ratio", "0.2"},
                            {"hybridgen.cpu_k_cap", "200"}});
  const PlanResult plan = hg->plan(rig.problem, rig.platform);
  ASSERT_EQ(plan.status, PlanStatus::ok);
  EXPECT_NE(plan.parameters.at("cpu_k_cap").find("200"), std::string::npos);
  hg->load();
  const int d = kShape.head_dim;
  for (int s = 0; s < 12; ++s) {
    hg->prepare_step(s);
    StepResult out;
    hg->step(s, out);
    hg->fill_attended(s, out);
    const int64_t ctx = rig.problem.context_at(s);
    const int64_t window_start = (ctx - 1) / 16 * 16 - 7 * 16;  // 8 window pages, last partial
    const int64_t host = window_start;                          // host tokens per head
    const int64_t scan_from = (host - 200) / 16 * 16;           // page-aligned cap
    ASSERT_EQ(out.attended.size(), 8u);
    for (int qh = 0; qh < kShape.q_heads; ++qh) {
      const auto& att = out.attended[qh];
      int64_t host_rows = 0;
      for (int64_t t : att)
        if (t < window_start) {
          EXPECT_GE(t, scan_from) << "step " << s;
          ++host_rows;
        }
      EXPECT_EQ(host_rows, static_cast<int64_t>(std::ceil(0.2 * (host - scan_from))));
      EXPECT_LT(rel_err(out.o.data() + qh * d, rig.attend(0, s, qh, att)), 2e-5);
    }
    // K is read for the scored pages only (2 KV heads, fp16), plus the selected V rows.
    const int64_t k_bytes = (host - scan_from) * 2 * d * 2;
    const int64_t read = out.traffic.bytes_read[int(Processor::cpu)][int(MemoryKind::local_dram)];
    EXPECT_GE(read, k_bytes);
    EXPECT_LT(read, k_bytes + 8 * (host - scan_from) * d * 2);
  }
}

TEST(HybridGenRepairs, PromotedPagesAreRefreshedAndColdOnesDemoted) {
  Rig rig(kShape, 1000, 40, 1 << 20,
          {tier(MemoryKind::local_dram, 0), tier(MemoryKind::cxl, 1, true)});
  auto hg = make_hybridgen({{"hybridgen.ratio", "0.1"},
                            {"hybridgen.scheduler", "static"},
                            {"hybridgen.gpu_tokens", "128"},
                            {"hybridgen.hot_share", "0.3"},
                            {"hybridgen.migrate_every", "4"}});
  ASSERT_EQ(hg->plan(rig.problem, rig.platform).status, PlanStatus::ok);
  hg->load();
  ASSERT_GT(hg->hot_slots(), 0);
  std::set<std::pair<int, int64_t>> was_hot;
  int refreshed = 0, demoted = 0, shrank = 0;
  std::vector<int> hot_before(kShape.kv_heads, 0);
  std::map<std::pair<int, int64_t>, float> score_when_hot;
  for (int s = 0; s < 40; ++s) {
    hg->prepare_step(s);
    StepResult out;
    hg->step(s, out);
    hg->fill_attended(s, out);
    for (int h = 0; h < kShape.kv_heads; ++h) {
      int hot_now = 0;
      for (int64_t i = 0; i < 60; ++i) hot_now += hg->page_home(0, h, i) == hybrid::PageHome::hot;
      // A swap keeps the count; only a demotion without a replacement lowers it.
      shrank += hot_now < hot_before[h];
      hot_before[h] = hot_now;
    }
    for (int h = 0; h < kShape.kv_heads; ++h)
      for (int64_t i = 0; i < 50; ++i) {
        const auto key = std::make_pair(h, i);
        const bool hot = hg->page_home(0, h, i) == hybrid::PageHome::hot;
        if (hot && score_when_hot.count(key) && hg->page_score(0, h, i) != score_when_hot[key])
          ++refreshed;
        if (hot) score_when_hot[key] = hg->page_score(0, h, i);
        if (!hot && was_hot.count(key)) ++demoted;
        if (hot)
          was_hot.insert(key);
        else
          was_hot.erase(key);
      }
  }
  EXPECT_GT(refreshed, 0);  // a promoted page's score is no longer frozen
  EXPECT_GT(demoted, 0);    // and pages that went cold left the hot slots,
  EXPECT_GT(shrank, 0);     // some without a hotter page to take their slot
}

// The operations HybridGen queues, passed through to a real cpu accelerator, with every side
// copy's source range recorded.
class SideCopyTap final : public test::ForwardingAccelerator {
 public:
  using ForwardingAccelerator::ForwardingAccelerator;
  std::vector<std::pair<const std::byte*, size_t>> side;  // source, bytes
  int ordered = 0;

  void copy_to_device_async(void* d, const void* s, size_t n) override {
    side.emplace_back(static_cast<const std::byte*>(s), n);
    real_.copy_to_device_async(d, s, n);
  }
  void order_side_copies() override {
    ++ordered;
    real_.order_side_copies();
  }
};

// Logit mode ships its rows in pieces as they are gathered (so the copy engine works while the
// CPU still gathers), the serial ablation in one piece per buffer after the CPU part; either
// way the pieces tile the same buffers, the h2d bytes are the same and the output is the same.
TEST(HybridGenRepairs, RowsShipInPiecesAsTheyAreGathered) {
  std::vector<std::vector<std::pair<const std::byte*, size_t>>> copies;
  std::vector<std::vector<float>> outputs;
  std::vector<int64_t> h2d;
  for (const char* overlap : {"1", "0"}) {
    Rig rig(kShape, 1000, 1, 1 << 20, {tier(MemoryKind::local_dram, 0)});
    SideCopyTap tap(*rig.acc);
    rig.platform.accelerator = &tap;
    auto hg = make_hybridgen({{"hybridgen.gpu_tokens", "128"},
                              {"hybridgen.scheduler", "static"},
                              {"hybridgen.ratio", "0.1"},
                              {"hybridgen.overlap", overlap}});
    ASSERT_EQ(hg->plan(rig.problem, rig.platform).status, PlanStatus::ok);
    hg->load();
    tap.side.clear();
    hg->prepare_step(0);
    StepResult out;
    hg->step(0, out);
    EXPECT_EQ(tap.ordered, 1) << "one ordering point, before the merge";
    copies.push_back(tap.side);
    outputs.push_back(out.o);
    h2d.push_back(out.traffic.h2d_bytes);
  }
  // 8 query heads = 8 blocks in 4 pieces: logits and V rows per piece.
  ASSERT_EQ(copies[0].size(), 2u * 4);
  ASSERT_EQ(copies[1].size(), 2u);
  for (int buf = 0; buf < 2; ++buf) {  // logits, then V rows
    const std::byte* at = copies[0][buf].first;
    for (size_t piece = 0; piece < 4; ++piece) {
      const auto& c = copies[0][2 * piece + buf];
      EXPECT_EQ(c.first, at) << "piece " << piece << " follows the previous one";
      EXPECT_GT(c.second, 0u);
      at += c.second;
    }
    EXPECT_EQ(static_cast<size_t>(at - copies[0][buf].first), copies[1][buf].second)
        << "the pieces cover the buffer the serial ablation ships whole";
  }
  EXPECT_EQ(h2d[0], h2d[1]);
  EXPECT_EQ(outputs[0], outputs[1]);
}

}  // namespace
}  // namespace hb::test
