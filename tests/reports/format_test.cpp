#include "reports/format.h"

#include <gtest/gtest.h>

#include <limits>

#include "reports/text_table.h"

namespace hb::reports {
namespace {

TEST(Format, Durations) {
  EXPECT_EQ(format_duration_ns(812), "812 ns");
  EXPECT_EQ(format_duration_ns(3412), "3.41 us");
  EXPECT_EQ(format_duration_ns(999'700), "1.00 ms");  // not "1000 us"
  EXPECT_EQ(format_duration_ns(12'345'678), "12.3 ms");
  EXPECT_EQ(format_duration_ns(2.05e9), "2.05 s");
  EXPECT_EQ(format_duration_ns(std::numeric_limits<double>::quiet_NaN()), "n/a");
}

TEST(Format, OtherUnits) {
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(1536), "1.50 KiB");
  EXPECT_EQ(format_bytes(16.0 * (1 << 30)), "16.0 GiB");
  EXPECT_EQ(format_percent(0.034), "3.4%");
  EXPECT_EQ(format_percent(0.034, true), "+3.4%");
  EXPECT_EQ(format_percent(-0.2, true), "-20.0%");
  EXPECT_EQ(format_ratio(1.834), "1.83x");
  EXPECT_EQ(format_sci(0.00123), "1.2e-03");
  EXPECT_EQ(format_tokens(4096), "4k");
  EXPECT_EQ(format_tokens(131072), "128k");
  EXPECT_EQ(format_tokens(1 << 20), "1M");
  EXPECT_EQ(format_tokens(1000), "1000");
  // Issue 49: "14337k" beside "3.20M". From 1M on the unit is M, exact or to two decimals.
  EXPECT_EQ(format_tokens(int64_t(14337) * 1024), "14.00M");
  EXPECT_EQ(format_tokens(int64_t(1536) * 1024), "1.50M");
  EXPECT_EQ(format_tokens(3355443), "3.20M");
  EXPECT_EQ(format_tokens(int64_t(1023) * 1024), "1023k");
  EXPECT_EQ(format_token_count(13107), "12.8k");
  EXPECT_EQ(format_token_count(int64_t(14337) * 1024), "14.00M");
  EXPECT_EQ(format_token_count(3355443), "3.20M");
  EXPECT_EQ(format_p_value(0.0312), "0.031");
  EXPECT_EQ(format_p_value(1e-9), "<1e-6");
}

TEST(Format, Lists) {
  EXPECT_EQ(format_list({}), "");
  EXPECT_EQ(format_list({"h2o"}), "h2o");
  EXPECT_EQ(format_list({"h2o", "quest", "offload"}), "h2o, quest, offload");
  EXPECT_EQ(format_list({"a", "b"}, "; "), "a; b");
}

TEST(TextTable, PlainAndMarkdownAlign) {
  TextTable t;
  t.add_column("name");
  t.add_column("time", TextTable::Align::right);
  t.add_row({"a", "1 ms"});
  t.add_row({"long|name", "10.5 ms"});
  EXPECT_EQ(t.plain(),
            "name          time\n"
            "---------  -------\n"
            "a             1 ms\n"
            "long|name  10.5 ms\n");
  EXPECT_EQ(t.markdown(),
            "| name       |    time |\n"
            "| ---------- | ------: |\n"
            "| a          |    1 ms |\n"
            "| long\\|name | 10.5 ms |\n");
}

TEST(TextTable, WidthCountsCharactersNotBytes) { EXPECT_EQ(display_width("± 2%"), 4u); }

}  // namespace
}  // namespace hb::reports
