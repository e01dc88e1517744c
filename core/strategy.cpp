#include "core/strategy.h"

#include "core/error.h"
#include "core/parse.h"

namespace hb {

const HostTier* Platform::tier_of_kind(MemoryKind k) const {
  for (const auto& t : host_tiers)
    if (t.location.kind == k) return &t;
  return nullptr;
}

double StrategyOptions::number(const std::string& strategy, const std::string& key, double def,
                               const parse::RealRange& range) const {
  const std::string full = strategy + "." + key;
  asked_.insert(full);
  auto it = kv_.find(full);
  if (it == kv_.end()) return def;
  used_[full] = true;
  // Strict: the whole value, finite ("nan", "inf", "0.2x" refused with the option named).
  return parse::real(it->second, "--opt " + full, range);
}

int64_t StrategyOptions::count(const std::string& strategy, const std::string& key, int64_t def,
                               int64_t min, int64_t max) const {
  const std::string full = strategy + "." + key;
  asked_.insert(full);
  auto it = kv_.find(full);
  if (it == kv_.end()) return def;
  used_[full] = true;
  return parse::count(it->second, "--opt " + full, min, max);
}

std::string StrategyOptions::text(const std::string& strategy, const std::string& key,
                                  const std::string& def) const {
  const std::string full = strategy + "." + key;
  asked_.insert(full);
  auto it = kv_.find(full);
  if (it == kv_.end()) return def;
  used_[full] = true;
  return it->second;
}

void StrategyOptions::check_all_used(const std::string& strategy) const {
  const std::string prefix = strategy + ".";
  for (const auto& [k, v] : kv_) {
    if (k.rfind(prefix, 0) != 0 || used_.count(k)) continue;
    std::string known;
    for (const std::string& a : asked_)
      if (a.rfind(prefix, 0) == 0) known += (known.empty() ? "" : ", ") + a.substr(prefix.size());
    throw Error("strategy " + strategy + " has no option '" + k.substr(prefix.size()) + "'",
                known.empty() ? strategy + " takes no options"
                              : "its options are: " + known + " (pass --opt " + strategy +
                                    ".<option>=<value>)");
  }
}

StrategyRegistry& StrategyRegistry::instance() {
  static StrategyRegistry r;
  return r;
}

void StrategyRegistry::add(StrategyInfo info) {
  for (auto& i : infos_)
    if (i.name == info.name) {
      i = std::move(info);
      return;
    }
  infos_.push_back(std::move(info));
}

const StrategyInfo& StrategyRegistry::find(const std::string& name) const {
  for (const auto& i : infos_)
    if (i.name == name) return i;
  std::string known;
  for (const auto& i : infos_) known += (known.empty() ? "" : ", ") + i.name;
  throw Error("unknown strategy '" + name + "'", "use one of: " + known + " (or all)");
}

}  // namespace hb
