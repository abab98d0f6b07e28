// The CPU reference backend: the device arena is one preallocated, page-aligned
// host block of exactly `capacity_bytes` managed by ArenaAllocator (OOM when the
// budget is exceeded); the compute stream is the calling thread (kernels and
// copies on it are synchronous); CreateStream() streams are worker threads.
// Kernels use `threads` OpenMP threads (and set Eigen's process-global thread
// count, so the last backend created wins). With several ranks per box give each
// rank cores/ranks threads, and run with OMP_WAIT_POLICY=passive (zplan and zrun do, with a
// bounded GOMP_SPINCOUNT): OpenMP barriers that spin without bound steal the other ranks' cores.
#pragma once

#include <cstddef>
#include <memory>

#include "core/status.h"
#include "executor/backend/backend.h"

namespace zinf {

// threads <= 0: use all hardware threads.
Result<std::unique_ptr<Backend>> MakeCpuBackend(size_t capacity_bytes, int threads = 0);

}  // namespace zinf
