// A parameter fetch's first stages as the profile's probes drive them through zrun's own lanes
// (executor/zero3/lane.h): the coupling probe (then an allgather) and the wake probe.
#pragma once

#include <cstddef>

#include "executor/zero3/lane.h"

namespace zinf {

// An NVMe read, as a job on `nvme` that waits `nvme_wait_s` (a read's latency blocks its lane;
// no job when nvme_wait_s <= 0), then a host->device copy of `floats` floats on `copy` after
// it. Returns the copy's signal.
SignalPtr SubmitCopyFetch(Lane& nvme, Lane& copy, double nvme_wait_s, float* host, float* dev, size_t floats);

}  // namespace zinf
