#include "model/published.h"

#include <algorithm>
#include <initializer_list>
#include <utility>

#include "core/error.h"
#include "core/json_text.h"
#include "core/model_presets.h"
#include "model/platform_model.h"
#include "model/profile_reader.h"

namespace hb::model {

namespace {

constexpr const char* kFix = "see the row format in model/published/README.md";

[[noreturn]] void bad(const ProfileReader& at, const std::string& what) { at.fail(what); }

int64_t positive_whole(const ProfileReader& at) {
  const double v = at.number();
  if (v < 1 || v > 1e12 || v != static_cast<double>(static_cast<int64_t>(v)))
    bad(at, "expected a whole number >= 1");
  return static_cast<int64_t>(v);
}

template <typename E>
E one_of(const ProfileReader& at, std::initializer_list<std::pair<const char*, E>> names) {
  const std::string s = at.str();
  std::string list;
  for (const auto& [n, e] : names) {
    if (s == n) return e;
    list += (list.empty() ? "" : ", ") + std::string(n);
  }
  bad(at, "\"" + s + "\" is not one of " + list);
}

void check_presets(const ProfileReader& r, const PublishedRow& row) {
  const auto platforms = preset_names();
  if (std::find(platforms.begin(), platforms.end(), row.platform) == platforms.end())
    bad(r.at("platform"), "\"" + row.platform + "\" is not a platform preset (model/profiles/)");
  try {
    find_model_preset(row.model);
  } catch (const Error& e) {
    bad(r.at("model"), e.problem() + " (" + e.fix() + ")");
  }
}

PublishedRow parse_row(const ProfileReader& r) {
  r.only({"publication", "where",         "platform", "model",     "model_note",  "system",
          "strategy",    "options",       "seq_len",  "batch",     "gen_len",     "dtype",
          "metric",      "value",         "read",     "read_note", "length_note", "excluded",
          "tp",          "weights_dtype", "kv_dtype"});
  PublishedRow row;
  row.publication = r.at("publication").str();
  row.where = r.at("where").str();
  row.platform = r.at("platform").str();
  row.model = r.at("model").str();
  row.system = r.at("system").str();
  row.strategy = r.at("strategy").str();
  if (r.has("options"))
    for (const auto& [k, v] : r.at("options").json().items())
      row.options[k] = r.at("options").at(k).str();
  row.seq_len = positive_whole(r.at("seq_len"));
  row.batch = static_cast<int>(std::min<int64_t>(positive_whole(r.at("batch")), 1 << 20));
  if (r.has("gen_len"))
    row.gen_len = static_cast<int>(std::min<int64_t>(positive_whole(r.at("gen_len")), 1 << 20));
  if (r.has("excluded")) row.excluded = r.at("excluded").str();
  row.dtype = one_of<DType>(r.at("dtype"),
                            {{"fp16", DType::f16}, {"bf16", DType::bf16}, {"fp32", DType::f32}});
  if (r.has("tp")) row.tp = static_cast<int>(std::min<int64_t>(positive_whole(r.at("tp")), 1024));
  for (auto [key, out] : {std::pair{"weights_dtype", &row.weights}, {"kv_dtype", &row.kv}})
    if (r.has(key))
      *out =
          one_of<PricedDtype>(r.at(key), {{"fp16", PricedDtype::fp16}, {"fp8", PricedDtype::fp8}});
  row.metric = one_of<PublishedMetric>(r.at("metric"),
                                       {{"ms_per_token", PublishedMetric::ms_per_token},
                                        {"tokens_per_s", PublishedMetric::tokens_per_s},
                                        {"transfer_share", PublishedMetric::transfer_share}});
  if (row.gen_len > 0 && row.metric != PublishedMetric::tokens_per_s)
    bad(r.at("gen_len"), "a whole generation's figure is a throughput: metric tokens_per_s");
  row.value = r.at("value").number();
  if (row.value <= 0) bad(r.at("value"), "expected a positive number");
  row.read = one_of<PublishedReading>(
      r.at("read"), {{"printed", PublishedReading::printed}, {"plot", PublishedReading::plot}});
  for (const char* k : {"model_note", "read_note", "length_note"})
    if (r.has(k)) row.notes += (row.notes.empty() ? "" : "; ") + r.at(k).str();
  check_presets(r, row);
  return row;
}

}  // namespace

std::vector<PublishedRow> parse_published_measurements(const std::string& text,
                                                       const std::string& origin) {
  Json doc;
  try {
    doc = parse_json_text<Json>(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(origin + ": not JSON (" + e.what() + ")", kFix);
  }
  const ProfileReader root(doc, "$", origin);
  std::vector<PublishedRow> rows;
  try {
    root.only({"schema", "comment", "rows"});
    if (root.at("schema").str() != "hybridbench.published/1")
      bad(root.at("schema"), "expected \"hybridbench.published/1\"");
    root.at("rows").each([&](const ProfileReader& r) { rows.push_back(parse_row(r)); });
    if (rows.empty()) bad(root.at("rows"), "expected at least one row");
  } catch (const Error& e) {
    throw Error(e.problem(), kFix);  // the reader's own fix names the profile schema
  }
  return rows;
}

}  // namespace hb::model
