// Fleet reports (reports/fleet.h): merging ranks' reports, host labels, the optional schema
// fields and the procurement table's column per host.
#include <gtest/gtest.h>

#include "fixtures.h"
#include "reports/compare.h"
#include "reports/fleet.h"
#include "reports/html.h"
#include "reports/json_io.h"
#include "reports/tables.h"

namespace hb::reports {
namespace {

// One rank's report: the fixture's points, its host facts, one HostRecord.
Report rank_report(int rank, const std::string& host, double scale = 1.0) {
  Report r = testing::make_report();
  for (auto& p : r.points) {
    std::vector<double> v = p.step.samples_ns;
    for (auto& x : v) x *= scale;
    static_cast<Timing&>(p.step) = Timing::from_samples(v);
  }
  r.context.host = host;
  r.context.hosts = {
      host_record(r.context, rank, "CPUs 0-1 (NUMA node 0, the only node with CPUs)")};
  return r;
}

TEST(Fleet, ReplicateKeepsEachHostsPointsApartAndLabelsThem) {
  const Report merged =
      merge_fleet({rank_report(1, "b", 2.0), rank_report(0, "a")}, FleetMode::replicate);
  const size_t per_rank = testing::make_report().points.size();
  ASSERT_EQ(merged.points.size(), 2 * per_rank);
  ASSERT_EQ(merged.context.hosts.size(), 2u);
  EXPECT_EQ(merged.context.hosts[0].label, "a");
  EXPECT_EQ(merged.context.hosts[1].label, "b");
  EXPECT_EQ(merged.context.hosts[1].points, static_cast<int64_t>(per_rank));
  EXPECT_EQ(merged.context.host, "a, b");
  EXPECT_EQ(merged.context.sweep.at("distribute"), "replicate");
  EXPECT_EQ(merged.context.sweep.at("ranks"), "2");
  for (const auto& p : merged.points) {
    ASSERT_TRUE(p.ran_on.known());
    EXPECT_EQ(p.axes.extra.at(kHostAxis), p.ran_on.host);
  }
  // Speedups stay within a host: each group key names one.
  for (const auto& s : merged.speedups) EXPECT_NE(s.group_key.find(";host="), std::string::npos);
}

TEST(Fleet, RanksOnOneHostGetDistinctLabels) {
  std::vector<HostRecord> h(2);
  h[0].rank = 0, h[1].rank = 1;
  h[0].host = h[1].host = "node";
  h[0].accelerator.kind = h[1].accelerator.kind = AcceleratorKind::cpu;
  assign_host_labels(h);
  EXPECT_EQ(h[0].label, "node/r0");
  EXPECT_EQ(h[1].label, "node/r1");
  h[0].accelerator.kind = h[1].accelerator.kind = AcceleratorKind::cuda;
  h[0].accelerator.device = 0, h[1].accelerator.device = 1;
  assign_host_labels(h);
  EXPECT_EQ(h[1].label, "node/gpu1");
}

TEST(Fleet, PointsModeRefusesTheSamePointTwice) {
  EXPECT_THROW(merge_fleet({rank_report(0, "a"), rank_report(1, "b")}, FleetMode::points), Error);
}

TEST(Fleet, FailedRankIsRecordedAndTheOthersSurvive) {
  const Report merged =
      merge_fleet({rank_report(0, "a"), failed_rank_report(1, "", "no result within 300 s")},
                  FleetMode::replicate);
  ASSERT_EQ(merged.context.hosts.size(), 2u);
  EXPECT_EQ(merged.context.hosts[1].status, HostStatus::error);
  EXPECT_EQ(merged.context.hosts[1].host, "unknown");
  EXPECT_EQ(merged.points.size(), testing::make_report().points.size());
  // Still a column in the table, whose cells say nothing ran.
  const auto tables = procurement_tables(merged);
  ASSERT_EQ(tables.size(), 1u);
  EXPECT_EQ(tables[0].hosts, (std::vector<std::string>{"a", "unknown"}));
  const std::string md = markdown_report(merged);
  EXPECT_NE(md.find("FAILED: no result within 300 s"), std::string::npos) << md;
}

TEST(Fleet, SchemaRoundTripsHostsAndRanOn) {
  const Report merged =
      merge_fleet({rank_report(0, "a"), rank_report(1, "b")}, FleetMode::replicate);
  const Report back = from_json_text(to_json_text(merged), "mem");
  ASSERT_EQ(back.context.hosts.size(), 2u);
  EXPECT_EQ(back.context.hosts[1].label, "b");
  EXPECT_EQ(back.context.hosts[1].binding, merged.context.hosts[1].binding);
  EXPECT_EQ(back.context.hosts[0].topology.nodes.size(),
            merged.context.hosts[0].topology.nodes.size());
  ASSERT_EQ(back.points.size(), merged.points.size());
  EXPECT_EQ(back.points[0].ran_on.rank, merged.points[0].ran_on.rank);
  EXPECT_EQ(back.points[0].ran_on.host, merged.points[0].ran_on.host);
  // A single-process report has neither field, in the file or after reading it.
  const std::string plain = to_json_text(testing::make_report());
  EXPECT_EQ(plain.find("\"hosts\""), std::string::npos);
  EXPECT_EQ(plain.find("\"ran_on\""), std::string::npos);
  EXPECT_FALSE(from_json_text(plain, "mem").points[0].ran_on.known());
}

TEST(Fleet, TableHasAColumnPerHost) {
  const Report merged =
      merge_fleet({rank_report(0, "a"), rank_report(1, "b", 2.0)}, FleetMode::replicate);
  const auto tables = procurement_tables(merged);
  ASSERT_EQ(tables.size(), 1u);  // the host axis is columns, not a setting of its own
  const auto& t = tables[0];
  EXPECT_EQ(t.hosts, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(t.columns().size(), 2 * t.seq_lens.size());
  const std::string header = time_grid(t).markdown().substr(0, 200);
  EXPECT_NE(header.find(" @ a "), std::string::npos) << header;
  EXPECT_NE(header.find(" @ b "), std::string::npos) << header;
  // Host b is twice as slow at every point.
  const int64_t len = t.seq_lens.front();
  const Point* a = t.at(t.strategies.front(), len, "a");
  const Point* b = t.at(t.strategies.front(), len, "b");
  ASSERT_TRUE(a && b);
  EXPECT_NEAR(b->step.summary.median / a->step.summary.median, 2.0, 1e-9);
  // Speedups are per host, so both hosts show the same ratios.
  EXPECT_EQ(t.speedup(t.strategies.front(), len, "a").has_value(),
            t.speedup(t.strategies.front(), len, "b").has_value());
  EXPECT_NE(markdown_report(merged).find("Pairwise at"), std::string::npos);
  EXPECT_NE(csv_report(merged).find(",ran_on_rank,ran_on_host,"), std::string::npos);
}

TEST(Fleet, HtmlDrawsChartsPerHostAndTablesWithHostColumns) {
  const Report merged =
      merge_fleet({rank_report(0, "a"), rank_report(1, "b", 2.0)}, FleetMode::replicate);
  const std::string html = html_report(merged);
  // Charts compare strategies on one machine: one set per host, each saying which.
  EXPECT_NE(html.find("bars span p10 to p90 (a)."), std::string::npos);
  EXPECT_NE(html.find("bars span p10 to p90 (b)."), std::string::npos);
  EXPECT_NE(html.find("4k @ b"), std::string::npos);
  EXPECT_NE(html.find("b: Test CPU"), std::string::npos);  // the rank's line in the context
}

TEST(Fleet, PointsModeShowsWhereEachPointRan) {
  Report r0 = rank_report(0, "a"), r1 = rank_report(1, "b");
  // Split the fixture's lengths between the ranks, as --distribute points does.
  auto keep = [](Report& r, bool even) {
    std::vector<Point> kept;
    for (auto& p : r.points)
      if ((p.axes.seq_len != 8192) == even) kept.push_back(p);
    r.points = kept;
  };
  keep(r0, true), keep(r1, false);
  const Report merged = merge_fleet({r0, r1}, FleetMode::points);
  const auto tables = procurement_tables(merged);
  ASSERT_EQ(tables.size(), 1u);
  EXPECT_TRUE(tables[0].hosts.empty());
  const auto where = ran_on_grid(tables[0]);
  ASSERT_TRUE(where.has_value());
  EXPECT_NE(where->markdown().find("r1 b"), std::string::npos) << where->markdown();
}

TEST(Fleet, CompareMatchesPerHostAndWarnsAboutHostChanges) {
  const Report old_r =
      merge_fleet({rank_report(0, "a"), rank_report(1, "b")}, FleetMode::replicate);
  Report new_r = merge_fleet({rank_report(0, "a"), rank_report(1, "c")}, FleetMode::replicate);
  const CompareResult c = compare_reports(old_r, new_r, {});
  EXPECT_GT(c.count(Verdict::missing), 0);  // host b's points
  EXPECT_GT(c.count(Verdict::added), 0);    // host c's points
  bool warned = false;
  for (const auto& w : c.warnings)
    warned |= w.find("host b (rank 1) is only in OLD") != std::string::npos;
  EXPECT_TRUE(warned);
}

}  // namespace
}  // namespace hb::reports
