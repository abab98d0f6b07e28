// Launchers of the CUDA kernels (.cu files, compiled by nvcc). Each enqueues its kernel
// on `s` and returns cudaGetLastError() (launch errors only; execution errors surface at
// the next synchronisation). Semantics are exactly those of the Backend methods of the
// same name (executor/backend/backend.h): row-major, fp32, device pointers.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace zinf::cuda {

// elementwise.cu
cudaError_t AddBias(float* y, const float* bias, int rows, int cols, int ld, cudaStream_t s);
cudaError_t BiasInit(float* y, int ld, const float* bias, const float* residual, int ld_res,
                     int rows, int cols, cudaStream_t s);
cudaError_t BiasGrad(const float* dy, float* dbias, int rows, int cols, int ld, cudaStream_t s);
cudaError_t Add(const float* a, const float* b, float* out, size_t n, cudaStream_t s);
cudaError_t Scale(float* x, float sc, size_t n, cudaStream_t s);
cudaError_t GeluFwd(const float* x, float* y, size_t n, cudaStream_t s);
cudaError_t GeluBwd(const float* dy, const float* x, float* dx, size_t n, cudaStream_t s);
cudaError_t CheckNonFinite(const float* x, size_t n, int32_t* flag, cudaStream_t s);

// adam_cast.cu. bc1 = 1/(1-beta1^t), bc2 = 1/(1-beta2^t), decay = 1 - lr*wd.
cudaError_t AdamStep(float* p, const float* g, float* m, float* v, size_t n, float lr,
                     float beta1, float beta2, float eps, float decay, float grad_scale,
                     float bc1, float bc2, cudaStream_t s);
cudaError_t CastF32ToBF16(const float* src, uint16_t* dst, size_t n, cudaStream_t s);
cudaError_t CastBF16ToF32(const uint16_t* src, float* dst, size_t n, cudaStream_t s);
cudaError_t CastF32ToF16(const float* src, uint16_t* dst, size_t n, cudaStream_t s);
cudaError_t CastF16ToF32(const uint16_t* src, float* dst, size_t n, cudaStream_t s);
// A row-major rows x cols matrix with leading dimension ld -> bf16 with the same ld
// (elements between rows are not touched).
cudaError_t CastMatrixF32ToBF16(const float* src, uint16_t* dst, int rows, int cols, int ld,
                                cudaStream_t s);

// layernorm.cu
cudaError_t LayerNormFwd(const float* x, const float* gamma, const float* beta, float* y,
                         float* mean, float* rstd, int rows, int cols, float eps, cudaStream_t s);
cudaError_t LayerNormBwd(const float* dy, const float* x, const float* gamma, const float* mean,
                         const float* rstd, float* dx, float* dgamma, float* dbeta, int rows,
                         int cols, cudaStream_t s);

// attention.cu. workspace: AttentionWorkspaceBytes (B*H*T*T floats for dS).
size_t AttentionWorkspaceBytes(int B, int T, int C, int H);
cudaError_t AttentionFwd(const float* qkv, float* out, float* probs, int B, int T, int C, int H,
                         cudaStream_t s);
cudaError_t AttentionBwd(const float* dout, const float* qkv, const float* probs, float* dqkv,
                         float* workspace, int B, int T, int C, int H, cudaStream_t s);

// embedding.cu
cudaError_t EmbeddingFwd(const int32_t* tokens, const float* wte, const float* wpe, float* out,
                         int B, int T, int C, cudaStream_t s);
cudaError_t EmbeddingBwd(const float* dout, const int32_t* tokens, float* dwte, float* dwpe,
                         int B, int T, int C, cudaStream_t s);

// cross_entropy.cu
cudaError_t CrossEntropyFwd(const float* logits, const int32_t* targets, float* row_loss,
                            float* mean_loss, int N, int V, cudaStream_t s);
cudaError_t CrossEntropyBwd(const float* logits, const int32_t* targets, float* dlogits,
                            float dloss, int N, int V, cudaStream_t s);

}  // namespace zinf::cuda
