#include "executor/backend/cuda/cuda_check.h"

#include <fmt/format.h>

namespace zinf::cuda {

Status CudaStatus(cudaError_t err, std::string_view what, const char* file, int line) {
  std::string msg = fmt::format("{}: {}: {} ({}:{})", what, cudaGetErrorName(err),
                                cudaGetErrorString(err), file, line);
  switch (err) {
    case cudaErrorMemoryAllocation: return OutOfMemory(std::move(msg));
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorInvalidDevice: return Unsupported(std::move(msg));
    default: return Internal(std::move(msg));
  }
}

Status CublasStatus(cublasStatus_t st, std::string_view what, const char* file, int line) {
  std::string msg = fmt::format("{}: {}: {} ({}:{})", what, cublasGetStatusName(st),
                                cublasGetStatusString(st), file, line);
  if (st == CUBLAS_STATUS_ALLOC_FAILED) return OutOfMemory(std::move(msg));
  if (st == CUBLAS_STATUS_INVALID_VALUE) return InvalidArgument(std::move(msg));
  return Internal(std::move(msg));
}

}  // namespace zinf::cuda
