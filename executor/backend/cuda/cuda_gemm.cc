#include "executor/backend/cuda/cuda_gemm.h"

#include <fmt/format.h>

#include "executor/backend/cuda/cuda_check.h"
#include "executor/backend/cuda/kernels.h"

namespace zinf::cuda {
namespace {

// Elements spanned by a row-major rows x cols matrix with leading dimension ld.
size_t Span(int rows, int cols, int ld) {
  if (rows <= 0 || cols <= 0) return 0;
  return static_cast<size_t>(rows - 1) * ld + cols;
}

size_t Align256(size_t b) { return (b + 255) / 256 * 256; }

}  // namespace

Result<std::unique_ptr<CublasGemm>> CublasGemm::Create(cudaStream_t stream) {
  cublasHandle_t h = nullptr;
  ZINF_CUBLAS_RETURN_IF_ERROR(cublasCreate(&h));
  std::unique_ptr<CublasGemm> g(new CublasGemm(h, stream));
  ZINF_CUBLAS_RETURN_IF_ERROR(cublasSetStream(h, stream));
  ZINF_CUBLAS_RETURN_IF_ERROR(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
  // fp32: no implicit TF32 (CUBLAS_DEFAULT_MATH); TF32 / bf16 are chosen per call through
  // the compute type of cublasGemmEx.
  ZINF_CUBLAS_RETURN_IF_ERROR(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
  return g;
}

CublasGemm::~CublasGemm() {
  if (ws_ != nullptr) {
    (void)cudaStreamSynchronize(stream_);
    (void)cudaFree(ws_);
  }
  (void)cublasDestroy(handle_);
}

Status CublasGemm::EnsureWorkspace(size_t bytes) {
  if (bytes <= ws_bytes_) return Status::Ok();
  if (ws_ != nullptr) {
    ZINF_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_));  // earlier GEMMs still read it
    ZINF_CUDA_RETURN_IF_ERROR(cudaFree(ws_));
    ws_ = nullptr;
    ws_bytes_ = 0;
  }
  ZINF_CUDA_RETURN_IF_ERROR(cudaMalloc(&ws_, bytes));
  ws_bytes_ = bytes;
  return Status::Ok();
}

Status CublasGemm::Run(GemmPrecision p, bool ta, bool tb, int m, int n, int k, float alpha,
                       const float* a, int lda, const float* b, int ldb, float beta, float* c,
                       int ldc) {
  if (m <= 0 || n <= 0) return Status::Ok();
  std::lock_guard<std::mutex> lock(mu_);
  const cublasOperation_t op_a = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  if (k <= 0 && beta == 0.0f) {  // C = 0 (NaN-safe)
    ZINF_CUDA_RETURN_IF_ERROR(cudaMemset2DAsync(c, sizeof(float) * ldc, 0, sizeof(float) * n,
                                                m, stream_));
    return Status::Ok();
  }
  // k == 0 with beta != 0 is C *= beta: no products, so the precision does not matter;
  // plain cuBLAS Sgemm (BLAS semantics) avoids empty bf16 operands.
  if (k <= 0) p = GemmPrecision::kFp32;
  switch (p) {
    case GemmPrecision::kFp32:
      ZINF_CUBLAS_RETURN_IF_ERROR(cublasSgemm(handle_, op_b, op_a, n, m, k, &alpha, b, ldb, a,
                                              lda, &beta, c, ldc));
      return Status::Ok();
    case GemmPrecision::kTf32:
      ZINF_CUBLAS_RETURN_IF_ERROR(cublasGemmEx(handle_, op_b, op_a, n, m, k, &alpha, b,
                                               CUDA_R_32F, ldb, a, CUDA_R_32F, lda, &beta, c,
                                               CUDA_R_32F, ldc, CUBLAS_COMPUTE_32F_FAST_TF32,
                                               CUBLAS_GEMM_DEFAULT));
      return Status::Ok();
    case GemmPrecision::kBf16: {
      const int a_rows = ta ? k : m, a_cols = ta ? m : k;
      const int b_rows = tb ? n : k, b_cols = tb ? k : n;
      const size_t a_bytes = Align256(Span(a_rows, a_cols, lda) * sizeof(uint16_t));
      const size_t b_bytes = Align256(Span(b_rows, b_cols, ldb) * sizeof(uint16_t));
      ZINF_RETURN_IF_ERROR(EnsureWorkspace(a_bytes + b_bytes));
      auto* a16 = static_cast<uint16_t*>(ws_);
      auto* b16 = reinterpret_cast<uint16_t*>(static_cast<char*>(ws_) + a_bytes);
      ZINF_CUDA_RETURN_IF_ERROR(CastMatrixF32ToBF16(a, a16, a_rows, a_cols, lda, stream_));
      ZINF_CUDA_RETURN_IF_ERROR(CastMatrixF32ToBF16(b, b16, b_rows, b_cols, ldb, stream_));
      ZINF_CUBLAS_RETURN_IF_ERROR(cublasGemmEx(handle_, op_b, op_a, n, m, k, &alpha, b16,
                                               CUDA_R_16BF, ldb, a16, CUDA_R_16BF, lda, &beta,
                                               c, CUDA_R_32F, ldc, CUBLAS_COMPUTE_32F,
                                               CUBLAS_GEMM_DEFAULT));
      return Status::Ok();
    }
  }
  return InvalidArgument(fmt::format("cuda gemm: unknown precision {}", static_cast<int>(p)));
}

}  // namespace zinf::cuda
