#pragma once
// Where a strategy that adapts to its own step times (HybridGen's feedback scheduler) reads them.
// A measured run gives none: the strategy reads the clock. Model mode gives the platform being
// projected: the step's exact Traffic priced by that platform's model, so the strategy adapts as
// it would on that platform, and two runs (or two build machines) adapt alike.
#include <string>

#include "core/overlap.h"
#include "core/traffic.h"

namespace hb {

// A step's busy time per resource (the projection model's resources, core/overlap.h).
struct ResourceTimesNs {
  double cpu_ns = 0, accelerator_ns = 0, transfer_ns = 0;
};

class StepTimeSource {
 public:
  virtual ~StepTimeSource() = default;
  // The busy times of a step that moved `step` (the executed sequences'); `structure` is the
  // executing strategy's overlap declaration. Throws hb::Error when the platform cannot price it.
  virtual ResourceTimesNs price(const Traffic& step, const OverlapStructure& structure) const = 0;
  // Where the times come from, for the report ("modeled on h100-pcie5-cxl").
  virtual std::string describe() const = 0;
};

}  // namespace hb
