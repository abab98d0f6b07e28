// Compute-speed calibration: how fast this machine's cores run now against the profile a plan
// is made from. A shared VM's cores drift by tens of percent within minutes (docs/
// performance-model.md), so a profile measured an hour ago misstates them; `zplan plan
// --calibrate` times the plan's own linear GEMMs (SpeedCheck, as zrun's checks between steps
// do) for a second or two and plans again with the profile's compute scaled to the speed found.
#pragma once

#include "core/hw_profile.h"
#include "core/plan.h"
#include "core/status.h"
#include "executor/backend/speed_check.h"

namespace zinf {

struct Calibration {
  SpeedTotals totals;  // the checks: how many, their timed seconds, the single checks' range
  SpeedTotals memory;  // the memory checks beside them (none where the profile has no host memory bandwidth)
  int threads = 0;     // the CPU backend's threads (the profile's per device)
  // Expected / measured over all checks (1: as profiled).
  double speed() const { return totals.Ratio(); }
  // The memory checks' expected / measured (0: none).
  double memory_speed() const { return memory.Ratio(); }
};

// Times `plan`'s linears for about `seconds` on a CPU backend with the profile's threads per
// device. Errors where the profile is not a CPU backend's or has no GEMM rates.
Result<Calibration> CalibrateComputeSpeed(const Plan& plan, const HwProfile& hw, double seconds);

}  // namespace zinf
