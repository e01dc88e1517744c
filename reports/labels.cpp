#include "reports/labels.h"

#include "reports/format.h"

namespace hb::reports {

// (text in the constants line, text in a label) in label order.
std::vector<std::pair<std::string, std::string>> AxesLabeler::fields(const PointAxes& a) const {
  const std::string b = std::to_string(a.batch), d = std::to_string(a.decode_steps),
                    p = std::to_string(a.page_tokens);
  std::vector<std::pair<std::string, std::string>> f = {
      {"strategy " + a.strategy, a.strategy},
      {"model " + a.model, a.model},
      {"seq_len " + format_tokens(a.seq_len), format_tokens(a.seq_len)},
      {"batch " + b, "b" + b},
      {"kv " + a.kv_dtype, a.kv_dtype},
      {"workload " + a.workload, a.workload},
      {"accelerator " + a.accelerator, a.accelerator},
      {d + " decode steps", d + " steps"},
      {"page " + p + " tokens", "page " + p},
  };
  for (const auto& [k, v] : a.extra) f.emplace_back(k + " " + v, k + "=" + v);
  return f;
}

AxesLabeler::AxesLabeler(const std::vector<PointAxes>& all) {
  if (all.empty()) return;
  first_ = fields(all.front());
  varies_.assign(first_.size(), false);
  for (const auto& a : all) {
    const auto f = fields(a);
    // Points with different extra keys: treat every field past the fixed ones as varying.
    if (f.size() != first_.size()) {
      for (size_t i = 9; i < varies_.size(); ++i) varies_[i] = true;
      continue;
    }
    for (size_t i = 0; i < f.size(); ++i)
      varies_[i] = varies_[i] || f[i].second != first_[i].second;
  }
  varies_[0] = true;  // always name the strategy: it is what a reader looks for
}

std::string AxesLabeler::label(const PointAxes& a) const {
  const auto f = fields(a);
  std::string s;
  for (size_t i = 0; i < f.size(); ++i)
    if (i >= varies_.size() || varies_[i]) s += (s.empty() ? "" : " ") + f[i].second;
  return s;
}

std::string AxesLabeler::constants() const {
  std::string s;
  for (size_t i = 0; i < first_.size(); ++i)
    if (!varies_[i]) s += (s.empty() ? "" : ", ") + first_[i].first;
  return s;
}

std::string benchmark_name(const PointAxes& a) {
  std::string s = a.strategy + "/" + a.model + "/seq_len=" + std::to_string(a.seq_len) +
                  "/batch=" + std::to_string(a.batch) + "/" + a.kv_dtype + "/" + a.workload + "/" +
                  a.accelerator + "/steps=" + std::to_string(a.decode_steps) +
                  "/page=" + std::to_string(a.page_tokens);
  for (const auto& [k, v] : a.extra) s += "/" + k + "=" + v;
  return s;
}

}  // namespace hb::reports
