// CUDA / cuBLAS error -> Status, recorded with file:line (internal to the CUDA backend
// and NCCL comm; includes the CUDA runtime headers).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <string>
#include <string_view>

#include "core/status.h"

namespace zinf::cuda {

// "what: cudaErrorMemoryAllocation: out of memory (file:line)"; OutOfMemory for
// cudaErrorMemoryAllocation, Unsupported for no device / insufficient driver, else Internal.
Status CudaStatus(cudaError_t err, std::string_view what, const char* file, int line);
Status CublasStatus(cublasStatus_t st, std::string_view what, const char* file, int line);

}  // namespace zinf::cuda

#define ZINF_CUDA_RETURN_IF_ERROR(call)                                                 \
  do {                                                                                 \
    cudaError_t zinf_ce_ = (call);                                                     \
    if (zinf_ce_ != cudaSuccess) return ::zinf::cuda::CudaStatus(zinf_ce_, #call, __FILE__, __LINE__); \
  } while (0)

#define ZINF_CUBLAS_RETURN_IF_ERROR(call)                                               \
  do {                                                                                 \
    cublasStatus_t zinf_cb_ = (call);                                                  \
    if (zinf_cb_ != CUBLAS_STATUS_SUCCESS)                                             \
      return ::zinf::cuda::CublasStatus(zinf_cb_, #call, __FILE__, __LINE__);         \
  } while (0)
