#include "executor/backend/backend_factory.h"

#include <fmt/format.h>

#include <string>

#include "executor/backend/cpu/cpu_backend.h"
#include "executor/backend/cuda/cuda_backend.h"

namespace zinf {

bool BuiltWithCuda() {
#ifdef ZINF_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

Result<std::unique_ptr<Backend>> MakeBackend(std::string_view kind, size_t capacity_bytes,
                                             int threads) {
  if (kind == "cpu") return MakeCpuBackend(capacity_bytes, threads);
  if (kind == "cuda") {
    if (!BuiltWithCuda()) {
      return Unsupported(
          "backend 'cuda': zinf was built without CUDA (reconfigure with -Dcuda=enabled on a "
          "machine with nvcc and the CUDA toolkit)");
    }
    CudaBackendOptions o;
    o.capacity_bytes = capacity_bytes;
    o.threads = threads > 0 ? threads : 1;
    return MakeCudaBackend(o);
  }
  return InvalidArgument(fmt::format("unknown backend '{}' (allowed: cpu, cuda)", kind));
}

}  // namespace zinf
