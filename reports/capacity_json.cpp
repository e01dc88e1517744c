#include "reports/capacity_json.h"

namespace hb::reports {

using json = nlohmann::ordered_json;

json capacity_json(const std::vector<CapacityRow>& rows) {
  json out = json::array();
  for (const auto& r : rows) {
    json e = {{"kind", to_string(r.kind)}, {"platform", r.platform}, {"model", r.model},
              {"kv_dtype", r.kv_dtype},    {"strategy", r.strategy}, {"kv_budget", r.kv_budget},
              {"batch", r.batch},          {"seq_len", r.seq_len},   {"none", r.none},
              {"unbounded", r.unbounded},  {"limit", r.limit}};
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<CapacityRow> read_capacity(const JsonReader& array) {
  std::vector<CapacityRow> rows;
  array.each_element([&](const JsonReader& e) {
    CapacityRow r;
    const std::string kind = e.str("kind");
    const auto k = kCapacityKinds.parse(kind);
    if (!k) e.member("kind").fail("\"" + kind + "\" is not one of " + kCapacityKinds.list());
    r.kind = *k;
    r.platform = e.str("platform");
    r.model = e.str("model");
    r.kv_dtype = e.str("kv_dtype");
    r.strategy = e.str("strategy");
    r.kv_budget = e.str("kv_budget");
    r.batch = e.i32("batch");
    r.seq_len = e.i64("seq_len");
    r.none = e.boolean("none");
    r.unbounded = e.boolean("unbounded");
    r.limit = e.str("limit");
    // The fixed side is positive; the answer is positive unless nothing fits (then 0).
    const bool context = r.kind == CapacityKind::max_context;
    const int64_t fixed = context ? r.batch : r.seq_len;
    const int64_t answer = r.value();
    if (fixed < 1 || answer < 0 || (answer == 0) != r.none || (r.none && r.unbounded))
      e.fail(std::string("a ") + kind + " row needs " + (context ? "batch" : "seq_len") +
             " >= 1 and an answer >= 1, or 0 with none true (never both none and unbounded)");
    rows.push_back(std::move(r));
  });
  return rows;
}

}  // namespace hb::reports
