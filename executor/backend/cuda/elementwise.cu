// Bias, residual, add, scale, GELU (tanh approximation), non-finite check.
#include "executor/backend/cuda/device_util.cuh"
#include "executor/backend/cuda/kernels.h"

namespace zinf::cuda {
namespace {

constexpr float kGeluK = 0.7978845608028654f;  // sqrt(2/pi)
constexpr float kGeluC = 0.044715f;

__global__ void AddBiasK(float* y, const float* bias, int rows, int cols, int ld) {
  const size_t n = static_cast<size_t>(rows) * cols;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    const size_t r = i / cols, c = i % cols;
    y[r * ld + c] += bias[c];
  }
}

__global__ void BiasInitK(float* y, int ld, const float* bias, const float* res, int ld_res,
                          int rows, int cols) {
  const size_t n = static_cast<size_t>(rows) * cols;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    const size_t r = i / cols, c = i % cols;
    // Each element is read and written by the same thread: residual may alias y.
    y[r * ld + c] = bias[c] + (res != nullptr ? res[r * ld_res + c] : 0.0f);
  }
}

// One thread per column, rows summed in order (deterministic, no atomics).
__global__ void BiasGradK(const float* dy, float* dbias, int rows, int cols, int ld) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= cols) return;
  float s = 0.0f;
  for (int r = 0; r < rows; ++r) s += dy[static_cast<size_t>(r) * ld + c];
  dbias[c] += s;
}

__global__ void AddK(const float* a, const float* b, float* out, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x)
    out[i] = a[i] + b[i];
}

__global__ void ScaleK(float* x, float s, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x)
    x[i] *= s;
}

__global__ void GeluFwdK(const float* x, float* y, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    const float v = x[i];
    const float u = kGeluK * (v + kGeluC * v * v * v);
    y[i] = 0.5f * v * (1.0f + tanhf(u));
  }
}

__global__ void GeluBwdK(const float* dy, const float* x, float* dx, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    const float v = x[i];
    const float u = kGeluK * (v + kGeluC * v * v * v);
    const float th = tanhf(u);
    const float du = kGeluK * (1.0f + 3.0f * kGeluC * v * v);
    const float g = 0.5f * (1.0f + th) + 0.5f * v * (1.0f - th * th) * du;
    dx[i] = dy[i] * g;
  }
}

__global__ void NonFiniteK(const float* x, size_t n, int32_t* flag) {
  bool bad = false;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x)
    bad |= !isfinite(x[i]);
  if (__syncthreads_or(bad) && threadIdx.x == 0) *flag = 1;
}

}  // namespace

cudaError_t AddBias(float* y, const float* bias, int rows, int cols, int ld, cudaStream_t s) {
  const size_t n = static_cast<size_t>(rows) * cols;
  if (n == 0) return cudaSuccess;
  AddBiasK<<<GridFor(n), kThreads, 0, s>>>(y, bias, rows, cols, ld);
  return cudaGetLastError();
}

cudaError_t BiasInit(float* y, int ld, const float* bias, const float* residual, int ld_res,
                     int rows, int cols, cudaStream_t s) {
  const size_t n = static_cast<size_t>(rows) * cols;
  if (n == 0) return cudaSuccess;
  BiasInitK<<<GridFor(n), kThreads, 0, s>>>(y, ld, bias, residual, ld_res, rows, cols);
  return cudaGetLastError();
}

cudaError_t BiasGrad(const float* dy, float* dbias, int rows, int cols, int ld, cudaStream_t s) {
  if (cols <= 0) return cudaSuccess;
  BiasGradK<<<(cols + 127) / 128, 128, 0, s>>>(dy, dbias, rows, cols, ld);
  return cudaGetLastError();
}

cudaError_t Add(const float* a, const float* b, float* out, size_t n, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  AddK<<<GridFor(n), kThreads, 0, s>>>(a, b, out, n);
  return cudaGetLastError();
}

cudaError_t Scale(float* x, float sc, size_t n, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  ScaleK<<<GridFor(n), kThreads, 0, s>>>(x, sc, n);
  return cudaGetLastError();
}

cudaError_t GeluFwd(const float* x, float* y, size_t n, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  GeluFwdK<<<GridFor(n), kThreads, 0, s>>>(x, y, n);
  return cudaGetLastError();
}

cudaError_t GeluBwd(const float* dy, const float* x, float* dx, size_t n, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  GeluBwdK<<<GridFor(n), kThreads, 0, s>>>(dy, x, dx, n);
  return cudaGetLastError();
}

cudaError_t CheckNonFinite(const float* x, size_t n, int32_t* flag, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  NonFiniteK<<<GridFor(n), kThreads, 0, s>>>(x, n, flag);
  return cudaGetLastError();
}

}  // namespace zinf::cuda
