// The simulated step as a Chrome trace (trace.json: one lane per resource), in the same
// format zrun writes its measured trace, so both open side by side in Perfetto.
#pragma once

#include <string>

#include "core/status.h"
#include "planner/sim/simulator.h"

namespace zinf {

Status WriteSimTrace(const SimResult& r, const std::string& path);

}  // namespace zinf
