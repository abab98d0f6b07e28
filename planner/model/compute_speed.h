// A profile at another compute speed: what the plan would take on this machine while its
// compute runs `speed` times as fast as when it was profiled (zrun's compute_speed check
// measures that ratio between steps). For `zplan simulate --compute-speed`.
#pragma once

#include "core/hw_profile.h"

namespace zinf {

// Scales the rates of the work the device's cores do by `speed` (and their fixed per-op and
// per-request CPU costs by 1 / speed): GEMM and attention curves, the kernel rates, op
// overhead and, on the CPU backend (where the cores also copy and run Adam), the memory and
// copy bandwidths, CPU Adam and the NVMe requests' CPU costs. The drive's bandwidth and
// latency and the collectives' figures are left as measured.
HwProfile AtComputeSpeed(HwProfile hw, double speed);

}  // namespace zinf
