#include "reports/whole_model_table.h"

#include <algorithm>
#include <set>

#include "reports/format.h"

namespace hb::reports {

namespace {

// Letters for distinct blank reasons, in order of first use.
class Footnotes {
 public:
  // " (a)": the reason's letter, after a figure it qualifies.
  std::string ref(const std::string& reason) {
    auto it = std::find(reasons_.begin(), reasons_.end(), reason);
    if (it == reasons_.end()) it = reasons_.insert(reasons_.end(), reason);
    return " (" + letter(static_cast<size_t>(it - reasons_.begin())) + ")";
  }
  // "- (a)": a blank figure and why.
  std::string mark(const std::string& reason) { return "-" + ref(reason); }
  std::vector<std::string> lines() const {
    std::vector<std::string> out;
    for (size_t i = 0; i < reasons_.size(); ++i)
      out.push_back("(" + letter(i) + ") " + reasons_[i]);
    return out;
  }

 private:
  static std::string letter(size_t i) {
    std::string s;
    do {
      s.insert(s.begin(), static_cast<char>('a' + i % 26));
      i /= 26;
    } while (i-- > 0);
    return s;
  }
  std::vector<std::string> reasons_;
};

std::string layers_text(const std::set<int>& layers) {
  std::string s;
  for (int l : layers) s += (s.empty() ? "" : ", ") + std::to_string(l);
  return s;
}

}  // namespace

// Dollars to the cent, whole dollars from $100; from $1M in powers of ten ("$2.4e+06"), so an
// extreme figure still fits its cell.
std::string money_cell(double usd) {
  if (usd >= 1e6) return "$" + format_sci(usd);
  return "$" + format_fixed(usd, usd >= 100 ? 0 : usd >= 1 ? 2 : 4);
}

std::string rate_cell(double per_s) {
  return format_fixed(per_s, per_s >= 100 ? 0 : per_s >= 1 ? 1 : per_s >= 0.01 ? 3 : 5);
}

WholeModelSection whole_model_section(const ProcurementTable& t) {
  WholeModelSection s;
  using A = TextTable::Align;
  s.table.add_column("strategy");
  s.table.add_column("context", A::right);
  for (const char* h : {"ITL", "tokens/s", "tokens/s per user", "$/Mtok", "tokens/s per W"})
    s.table.add_column(h, A::right);
  s.table.add_column("outside layers");
  Footnotes notes;
  std::set<int> layers;
  for (const auto& [len, host] : t.columns())
    for (const auto& strategy : t.strategies) {
      const Point* p = t.at(strategy, len, host);
      if (!p || !p->whole_model) continue;
      const WholeModel& w = *p->whole_model;
      layers.insert(w.layers);
      s.table.add_row(
          {strategy, format_tokens(len) + (host.empty() ? "" : " @ " + host),
           format_duration_ns(w.itl_ns) + (w.caveat.empty() ? "" : notes.ref(w.caveat)),
           rate_cell(w.tokens_per_s), rate_cell(w.tokens_per_s_per_user),
           w.cost_per_mtok_usd ? money_cell(*w.cost_per_mtok_usd) : notes.mark(w.cost_blank_reason),
           w.tokens_per_s_per_w ? rate_cell(*w.tokens_per_s_per_w)
                                : notes.mark(w.power_blank_reason),
           format_duration_ns(w.outside_layers_ns) + " " + to_string(w.outside_layers_provenance)});
    }
  s.reasons = notes.lines();
  s.heading = "Whole model: " + layers_text(layers) +
              " layers (ITL = layers x step time + the work outside the layers: embedding, "
              "final norm, LM head, sampling)";
  return s;
}

}  // namespace hb::reports
