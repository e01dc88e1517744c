#pragma once
// How the resources one decode step uses overlap in time: the declarative input the projection
// model (model) needs besides the step's exact Traffic. A step is a sequence of stages
// run one after another; the resources inside a stage run concurrently, so a stage lasts as long
// as its slowest resource. The resources the model prices are
//   cpu          host threads: memory traffic of host tiers and CPU flops (roofline)
//   accelerator  accelerator memory traffic and flops (roofline) plus kernel launches
//   transfer     host <-> accelerator link (H2D, D2H bytes and per-copy latency)
//   sync         host waits on the accelerator
// Text form (reports, --help, README): stages separated by " > ", concurrent resources by "|",
// e.g. "cpu|accelerator > transfer > sync" (HybridGen: CPU scoring overlaps the accelerator's
// attention, then the top-k rows cross the link, then the merge is waited for).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/vocabulary.h"

namespace hb {

// The resources above, a closed vocabulary: the text form is only read by parse() and written by
// to_string() (and as the model's phase names, model/roofline.cpp).
enum class Resource { cpu, accelerator, transfer, sync };
inline constexpr Vocabulary<Resource, 4> kResources{{"cpu", "accelerator", "transfer", "sync"}};

struct OverlapStructure {
  std::vector<std::vector<Resource>> stages;

  // Empty = the strategy did not declare one (the model then uses its table, then serial()).
  bool declared() const { return !stages.empty(); }

  // Everything one after another: the conservative default.
  static OverlapStructure serial() {
    return {{{Resource::transfer}, {Resource::cpu}, {Resource::accelerator}, {Resource::sync}}};
  }

  std::string to_string() const {
    std::string s;
    for (size_t i = 0; i < stages.size(); ++i) {
      if (i) s += " > ";
      for (size_t j = 0; j < stages[i].size(); ++j) {
        if (j) s += '|';
        s += kResources.name(stages[i][j]);
      }
    }
    return s;
  }

  // Parses the text form; throws hb::Error on an unknown or repeated resource or an empty stage.
  static OverlapStructure parse(std::string_view text) {
    OverlapStructure o;
    std::vector<Resource> seen;
    auto trim = [](std::string_view v) {
      while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
      while (!v.empty() && v.back() == ' ') v.remove_suffix(1);
      return v;
    };
    size_t pos = 0;
    while (pos <= text.size()) {
      const size_t gt = text.find('>', pos);
      const std::string_view stage =
          trim(text.substr(pos, gt == std::string_view::npos ? text.npos : gt - pos));
      std::vector<Resource> rs;
      size_t p = 0;
      while (p <= stage.size()) {
        const size_t bar = stage.find('|', p);
        const std::string name(
            trim(stage.substr(p, bar == std::string_view::npos ? stage.npos : bar - p)));
        const std::optional<Resource> r = kResources.parse(name);
        if (!r)
          throw Error(
              "overlap structure '" + std::string(text) + "': unknown resource '" + name + "'",
              "use cpu, accelerator, transfer and sync, e.g. \"cpu|accelerator > transfer > "
              "sync\"");
        for (const Resource x : seen)
          if (x == *r)
            throw Error("overlap structure '" + std::string(text) + "' names '" + name + "' twice",
                        "each resource appears in one stage");
        seen.push_back(*r);
        rs.push_back(*r);
        if (bar == std::string_view::npos) break;
        p = bar + 1;
      }
      o.stages.push_back(std::move(rs));
      if (gt == std::string_view::npos) break;
      pos = gt + 1;
    }
    return o;
  }

  bool operator==(const OverlapStructure&) const = default;
};

}  // namespace hb
