#pragma once
// Number formatting shared by every renderer (compare table, markdown, CSV, HTML), so a
// figure reads the same everywhere.
#include <cstdint>
#include <string>
#include <vector>

namespace hb::reports {

std::string format_duration_ns(double ns);  // "812 ns", "3.41 us", "1.20 ms", "2.05 s"
std::string format_bytes(double bytes);     // "512 B", "1.5 KiB", "16.0 GiB"
std::string format_percent(double fraction, bool sign = false);  // 0.034 -> "3.4%" / "+3.4%"
std::string format_ratio(double r);                              // 1.834 -> "1.83x"
std::string format_sci(double v);  // 0.00123 -> "1.2e-03"; NaN -> "nan"
// 4096 -> "4k", 131072 -> "128k", 1000 -> "1000", 1 << 20 -> "1M", 14337k -> "14.00M": from 1M
// on always in M, so a column never holds "14337k" beside "3.20M".
std::string format_tokens(int64_t n);
// A count of tokens at a glance (a capacity): format_tokens, but one decimal of k below 1M where
// it is no multiple of 1024 (13107 -> "12.8k").
std::string format_token_count(double tokens);
std::string format_fixed(double v, int decimals);  // locale-independent "%.*f"
std::string format_p_value(double p);              // "0.031", "<1e-6"
// The items with `sep` between them: {"h2o", "quest"} -> "h2o, quest"; {} -> "".
std::string format_list(const std::vector<std::string>& items, const char* sep = ", ");
// The shortest text that reads back as exactly `v` (0.05 -> "0.05", 1e-05 -> "1e-05"): the text
// form of a report's typed sweep values, so text -> JSON number -> text is the identity.
std::string format_shortest(double v);

}  // namespace hb::reports
