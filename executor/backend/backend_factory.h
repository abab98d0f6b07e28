// MakeBackend: the backend by name, for zrun / zplan profile and tests.
//   "cpu"  -> MakeCpuBackend(capacity_bytes, threads)
//   "cuda" -> MakeCudaBackend({capacity_bytes, device = local rank}) when zinf was built
//             with CUDA (ZINF_HAVE_CUDA); else Unsupported("zinf was built without CUDA").
// Any other name: InvalidArgument naming the allowed values.
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>

#include "core/status.h"
#include "executor/backend/backend.h"

namespace zinf {

Result<std::unique_ptr<Backend>> MakeBackend(std::string_view kind, size_t capacity_bytes,
                                             int threads = 0);

// True if this build contains the CUDA backend (a device may still be missing).
bool BuiltWithCuda();

}  // namespace zinf
