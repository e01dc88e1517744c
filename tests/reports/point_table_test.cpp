// The per-point table `run` prints (reports/point_table.h): optional columns appear only when a
// point has them, a timed point shows its figures, one that did not time dashes and its status.
#include "reports/point_table.h"

#include <string>

#include <gtest/gtest.h>

#include "reports/tables.h"
#include "tests/reports/fixtures.h"

namespace hb::reports {
namespace {

using testing::make_point;

// Whether `part` is in `text` once the table's padding (runs of spaces) is squeezed to one space.
bool has(const std::string& text, const std::string& part) {
  std::string squeezed;
  for (char c : text)
    if (c != ' ' || squeezed.empty() || squeezed.back() != ' ') squeezed += c;
  return squeezed.find(part) != std::string::npos;
}

TEST(PointTable, ShowsTheFiguresAndOnlyTheColumnsSomePointHas) {
  Report r;
  Point timed = make_point("cpu-only", 4096, 2e6, /*rel_noise=*/0);  // every sample 2 ms
  timed.axes.extra["kv_budget"] = "512";
  timed.accuracy.steps_scored = 4;
  timed.accuracy.mass_recall = 0.95;
  timed.accuracy.cosine = 0.99991;
  Point oom = make_point("full-gpu", 4096, 1e6);
  oom.status = PointStatus::oom;
  oom.reason = "KV does not fit";
  r.points = {timed, oom};
  const std::string md = point_table(r).markdown();
  EXPECT_TRUE(has(md, "| strategy | seq_len | batch | budget | median | noise | recall | cosine |"))
      << md;
  for (const char* absent : {"kv fit", "modeled", "needle", "vs trace o", "ran on"})
    EXPECT_FALSE(has(md, absent)) << absent << "\n" << md;
  EXPECT_TRUE(has(md, "| cpu-only | 4k | 1 | 512 | 2.00 ms | 0.0% | 95.0% | 0.9999 |")) << md;
  // The oom point: no budget of its own, dashes for every figure, the status last.
  EXPECT_TRUE(has(md, "| full-gpu | 4k | 1 | - | - | - | - | - | - | " + status_cell(oom) + " |"))
      << md;
}

TEST(PointTable, FleetReportsSayWhereEachPointRan) {
  Report r;
  Point p = make_point("cpu-only", 1024, 1e6, 0);
  p.ran_on.host = "node7";
  r.points = {p};
  r.context.hosts.push_back(HostRecord{});
  const std::string md = point_table(r).markdown();
  EXPECT_TRUE(has(md, "| ran on |")) << md;
  EXPECT_TRUE(has(md, "| node7 |")) << md;
  EXPECT_FALSE(has(md, "budget")) << md;
}

}  // namespace
}  // namespace hb::reports
