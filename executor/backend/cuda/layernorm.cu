// LayerNorm forward / backward: one block per row; parameter gradients one thread per
// column over the rows in order (deterministic, no atomics).
#include "executor/backend/cuda/device_util.cuh"
#include "executor/backend/cuda/kernels.h"

namespace zinf::cuda {
namespace {

__global__ void LayerNormFwdK(const float* x, const float* gamma, const float* beta, float* y,
                              float* mean, float* rstd, int cols, float eps) {
  __shared__ float smem[33];
  const size_t r = blockIdx.x;
  const float* xr = x + r * cols;
  float* yr = y + r * cols;
  float s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) s += xr[c];
  const float mu = BlockSum(s, smem) / static_cast<float>(cols);
  float ss = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    const float d = xr[c] - mu;
    ss += d * d;
  }
  const float var = BlockSum(ss, smem) / static_cast<float>(cols);
  const float rs = 1.0f / sqrtf(var + eps);
  for (int c = threadIdx.x; c < cols; c += blockDim.x)
    yr[c] = (xr[c] - mu) * rs * gamma[c] + beta[c];
  if (threadIdx.x == 0) {
    mean[r] = mu;
    rstd[r] = rs;
  }
}

// dx += rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dy * gamma.
__global__ void LayerNormBwdDxK(const float* dy, const float* x, const float* gamma,
                                const float* mean, const float* rstd, float* dx, int cols) {
  __shared__ float smem[33];
  const size_t r = blockIdx.x;
  const float* xr = x + r * cols;
  const float* dyr = dy + r * cols;
  float* dxr = dx + r * cols;
  const float mu = mean[r], rs = rstd[r];
  float sg = 0.0f, sgx = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    const float g = dyr[c] * gamma[c];
    sg += g;
    sgx += g * (xr[c] - mu) * rs;
  }
  const float inv_n = 1.0f / static_cast<float>(cols);
  const float mg = BlockSum(sg, smem) * inv_n;
  const float mgx = BlockSum(sgx, smem) * inv_n;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    const float xhat = (xr[c] - mu) * rs;
    dxr[c] += rs * (dyr[c] * gamma[c] - mg - xhat * mgx);
  }
}

__global__ void LayerNormBwdParamsK(const float* dy, const float* x, const float* mean,
                                    const float* rstd, float* dgamma, float* dbeta, int rows,
                                    int cols) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= cols) return;
  float sg = 0.0f, sb = 0.0f;
  for (int r = 0; r < rows; ++r) {
    const size_t off = static_cast<size_t>(r) * cols + c;
    sg += dy[off] * (x[off] - mean[r]) * rstd[r];
    sb += dy[off];
  }
  dgamma[c] += sg;
  dbeta[c] += sb;
}

}  // namespace

cudaError_t LayerNormFwd(const float* x, const float* gamma, const float* beta, float* y,
                         float* mean, float* rstd, int rows, int cols, float eps,
                         cudaStream_t s) {
  if (rows <= 0 || cols <= 0) return cudaSuccess;
  LayerNormFwdK<<<rows, kThreads, 0, s>>>(x, gamma, beta, y, mean, rstd, cols, eps);
  return cudaGetLastError();
}

cudaError_t LayerNormBwd(const float* dy, const float* x, const float* gamma, const float* mean,
                         const float* rstd, float* dx, float* dgamma, float* dbeta, int rows,
                         int cols, cudaStream_t s) {
  if (rows <= 0 || cols <= 0) return cudaSuccess;
  LayerNormBwdDxK<<<rows, kThreads, 0, s>>>(dy, x, gamma, mean, rstd, dx, cols);
  LayerNormBwdParamsK<<<(cols + 127) / 128, 128, 0, s>>>(dy, x, mean, rstd, dgamma, dbeta,
                                                          rows, cols);
  return cudaGetLastError();
}

}  // namespace zinf::cuda
