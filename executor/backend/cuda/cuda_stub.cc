// Built instead of the CUDA backend when zinf is configured without CUDA.
#include <string>

#include "executor/backend/cuda/cuda_backend.h"

namespace zinf {

bool CudaDeviceAvailable(std::string* why) {
  if (why != nullptr) *why = "zinf was built without CUDA";
  return false;
}

Result<std::unique_ptr<Backend>> MakeCudaBackend(const CudaBackendOptions&) {
  return Unsupported("CUDA backend: zinf was built without CUDA");
}

}  // namespace zinf
