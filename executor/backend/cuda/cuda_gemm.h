// cuBLAS GEMM for the CUDA backend (internal). Row-major C = alpha op(A) op(B) + beta C
// is computed as the column-major C^T = op(B)^T op(A)^T: cuBLAS gets (B, A) swapped and
// (n, m) for its (m, n); leading dimensions are passed through unchanged.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

#include "core/status.h"
#include "executor/backend/cuda/cuda_backend.h"

namespace zinf::cuda {

class CublasGemm {
 public:
  // Handle bound to `stream` (every GEMM runs there).
  static Result<std::unique_ptr<CublasGemm>> Create(cudaStream_t stream);
  ~CublasGemm();
  CublasGemm(const CublasGemm&) = delete;
  CublasGemm& operator=(const CublasGemm&) = delete;

  Status Run(GemmPrecision p, bool trans_a, bool trans_b, int m, int n, int k, float alpha,
             const float* a, int lda, const float* b, int ldb, float beta, float* c, int ldc);
  // Bytes of the bf16 operand workspace (outside the arena; grows to the largest GEMM).
  size_t workspace_bytes() const { return ws_bytes_; }

 private:
  CublasGemm(cublasHandle_t h, cudaStream_t s) : handle_(h), stream_(s) {}
  Status EnsureWorkspace(size_t bytes);

  cublasHandle_t handle_;
  cudaStream_t stream_;
  std::mutex mu_;
  void* ws_ = nullptr;
  size_t ws_bytes_ = 0;
};

}  // namespace zinf::cuda
