#pragma once
// The warning a report carries when its machine was busy during the run (the load facts the
// run recorded in context.system_settings, memtier/machine_load.h).
#include <string>

#include "reports/report.h"

namespace hb::reports {

// "" when the machine looked quiet or the report has no load facts (older reports). Busy: the
// 1-minute load average was >= 1 before the run started (work that was already there), other
// processes were runnable at both its start and its end, or the hypervisor stole >= 5% of
// the CPU time.
std::string busy_machine_warning(const ReportContext& c);

// The warning for a report: "" as well when none of its timed points ran on this machine (model
// mode's are priced from a profile: the load cannot touch them); where modeled points are mixed
// with measured ones, it says the modeled ones are unaffected.
std::string busy_machine_warning(const Report& r);

}  // namespace hb::reports
