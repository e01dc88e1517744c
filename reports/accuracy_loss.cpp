#include "reports/accuracy_loss.h"

#include <map>

#include "reports/format.h"

namespace hb::reports {

namespace {

struct Losses {
  std::vector<std::string> recall, needle;  // "3.1% at 16k", per point that lost most
};

std::string at(const Point& p, double share) {
  return format_percent(share) + " at " + format_tokens(p.axes.seq_len) +
         (p.axes.batch > 1 ? " (batch " + std::to_string(p.axes.batch) + ")" : "");
}

std::string listed(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : ", ") + i;
  return s;
}

}  // namespace

std::vector<std::string> accuracy_loss_lines(const Report& r) {
  std::vector<std::string> order;
  std::map<std::string, Losses> by_strategy;
  for (const auto& p : r.points) {
    if (!p.timed() || p.accuracy.steps_scored == 0) continue;
    const bool recall = p.accuracy.mass_recall < kLostMostBelow;
    const bool needle = p.accuracy.has_needle() && p.accuracy.needle_success_rate < kLostMostBelow;
    if (!recall && !needle) continue;
    auto [it, fresh] = by_strategy.try_emplace(p.axes.strategy);
    if (fresh) order.push_back(p.axes.strategy);
    if (recall) it->second.recall.push_back(at(p, p.accuracy.mass_recall));
    if (needle) it->second.needle.push_back(at(p, p.accuracy.needle_success_rate));
  }
  std::vector<std::string> lines;
  for (const auto& s : order) {
    const Losses& l = by_strategy.at(s);
    std::string line = s + ": ";
    if (!l.recall.empty()) line += "attention-mass recall " + listed(l.recall);
    if (!l.needle.empty())
      line += std::string(l.recall.empty() ? "" : "; ") + "needle retrieved in " +
              listed(l.needle) + " of its trials";
    lines.push_back(std::move(line));
  }
  return lines;
}

std::string accuracy_loss_sentence(const Report& r) {
  const std::vector<std::string> lines = accuracy_loss_lines(r);
  if (lines.empty()) return "";
  std::string list;
  for (const auto& l : lines) list += (list.empty() ? "" : "; ") + l;
  return "Warning: " + std::to_string(lines.size()) +
         (lines.size() == 1 ? " strategy" : " strategies") +
         " lost most of the exact attention (under half of its softmax mass attended, or the "
         "planted needle missed in most trials), so its output is not the model's whatever its "
         "speed: " +
         list + ".";
}

}  // namespace hb::reports
