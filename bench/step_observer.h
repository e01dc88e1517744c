#pragma once
// A hook on the steps a sweep's points execute, for a caller that models them (model/: run
// --platform and validate-model model the measured steps beside them; model mode puts each
// step's modeled time in place of its measured one). The loop knows neither platforms nor
// prices: it hands the hook each executed step and each finished point. A measured sweep
// installs none (RunEnvironment::observer null).
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "core/strategy.h"
#include "reports/report.h"

namespace hb::bench {

// A step as a point records it: its time, per-phase times and traffic (as executed and
// measured, unless a hook put other ones in their place).
struct RecordedStep {
  int64_t total_ns = 0;
  std::map<std::string, int64_t> phase_ns;
  Traffic traffic;
};

class StepObserver {
 public:
  // One point's observation, from its plan to its end.
  class PointRecord {
   public:
    virtual ~PointRecord() = default;
    // Step s (warm-up steps too: `timed` false) as `executed` ran it; `r` is what the point
    // records of a timed step, the executed step's on entry. Throws hb::Error: the point fails.
    virtual void on_step(const Strategy& executed, int s, bool timed, RecordedStep& r) = 0;
    // The point has stopped and its figures are final (not called for a failed point).
    virtual void finish(reports::Point& p) = 0;
  };

  virtual ~StepObserver() = default;
  // Starts observing a point whose strategy `s` has just planned (one layer's: a layer stack is
  // not observed); may add to p.strategy_params.
  virtual std::unique_ptr<PointRecord> observe(reports::Point& p, const Strategy& s) const = 0;
};

}  // namespace hb::bench
