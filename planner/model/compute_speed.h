// A profile at another compute speed: what the plan would take on this machine while its
// compute runs `speed` times as fast as when it was profiled (zrun's compute_speed check
// measures that ratio between steps), or while its drive reads and writes at other speeds
// (zrun's drive_speed check). For `zplan simulate --compute-speed / --nvme-read-speed /
// --nvme-write-speed`.
#pragma once

#include "core/hw_profile.h"

namespace zinf {

// Scales the rates of the work the device's cores do by `speed` (and their fixed per-op and
// per-request CPU costs by 1 / speed): GEMM and attention curves, the kernel rates, op
// overhead and, on the CPU backend (where the cores also copy and run Adam), the memory and
// copy bandwidths, the collectives between a node's ranks (memcpy on the same cores), CPU Adam
// and the NVMe requests' CPU costs. The drive's bandwidth and latency, the network between
// nodes, and other backends' collectives (their links, not the cores) are left as measured.
// `memory_speed` (0: `speed`) scales instead what streams through memory: the memory passes'
// bandwidth (memory_bw and hot_pass_curve) and, on the CPU backend, the copies, Adam, the
// collectives between a node's ranks and the NVMe requests' per-byte CPU (zrun's memory
// checks measure it apart from the GEMMs: on a shared VM the two move independently).
HwProfile AtComputeSpeed(HwProfile hw, double speed, double memory_speed = 0);

// Scales the drive's read bandwidths (bandwidth.nvme_read, _node, nvme.lane_read_curve) by
// `read` and its write bandwidths by `write`; its latencies and the requests' CPU costs are
// left as measured (the check that measures these speeds moves 4 MiB transfers).
HwProfile AtDriveSpeed(HwProfile hw, double read, double write);

}  // namespace zinf
