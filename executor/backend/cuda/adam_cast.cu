// Fused Adam(W) step and fp32 <-> bf16 / fp16 casts.
#include <cuda_fp16.h>

#include "executor/backend/cuda/device_util.cuh"
#include "executor/backend/cuda/kernels.h"

namespace zinf::cuda {
namespace {

// Same arithmetic, in the same order, as the CPU reference (cpu/adam_cast.cc).
__global__ void AdamK(float* p, const float* grad, float* m, float* v, size_t n, float lr,
                      float b1, float b2, float eps, float decay, float gs, float bc1,
                      float bc2) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    const float g = __fmul_rn(grad[i], gs);
    const float mi = __fadd_rn(__fmul_rn(b1, m[i]), __fmul_rn(1.0f - b1, g));
    const float vi = __fadd_rn(__fmul_rn(b2, v[i]), __fmul_rn(__fmul_rn(1.0f - b2, g), g));
    m[i] = mi;
    v[i] = vi;
    const float update = __fdiv_rn(__fmul_rn(mi, bc1), __fadd_rn(__fsqrt_rn(__fmul_rn(vi, bc2)), eps));
    p[i] = __fsub_rn(__fmul_rn(p[i], decay), __fmul_rn(lr, update));
  }
}

// Bit-exact with cpu::F32ToBF16: round-to-nearest-even, NaN -> quiet NaN keeping the sign
// and high payload bits.
__device__ __forceinline__ uint16_t F32ToBF16Bits(float f) {
  const uint32_t u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);
  const uint32_t rounding = 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>((u + rounding) >> 16);
}

__global__ void F32ToBF16K(const float* src, uint16_t* dst, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x)
    dst[i] = F32ToBF16Bits(src[i]);
}

__global__ void BF16ToF32K(const uint16_t* src, float* dst, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x)
    dst[i] = __uint_as_float(static_cast<uint32_t>(src[i]) << 16);
}

__global__ void F32ToF16K(const float* src, uint16_t* dst, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x)
    dst[i] = __half_as_ushort(__float2half_rn(src[i]));
}

__global__ void F16ToF32K(const uint16_t* src, float* dst, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x)
    dst[i] = __half2float(__ushort_as_half(src[i]));
}

__global__ void MatF32ToBF16K(const float* src, uint16_t* dst, int rows, int cols, int ld) {
  const size_t n = static_cast<size_t>(rows) * cols;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    const size_t off = (i / cols) * ld + i % cols;
    dst[off] = F32ToBF16Bits(src[off]);
  }
}

}  // namespace

cudaError_t AdamStep(float* p, const float* g, float* m, float* v, size_t n, float lr,
                     float beta1, float beta2, float eps, float decay, float grad_scale,
                     float bc1, float bc2, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  AdamK<<<GridFor(n), kThreads, 0, s>>>(p, g, m, v, n, lr, beta1, beta2, eps, decay,
                                         grad_scale, bc1, bc2);
  return cudaGetLastError();
}

cudaError_t CastF32ToBF16(const float* src, uint16_t* dst, size_t n, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  F32ToBF16K<<<GridFor(n), kThreads, 0, s>>>(src, dst, n);
  return cudaGetLastError();
}

cudaError_t CastBF16ToF32(const uint16_t* src, float* dst, size_t n, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  BF16ToF32K<<<GridFor(n), kThreads, 0, s>>>(src, dst, n);
  return cudaGetLastError();
}

cudaError_t CastF32ToF16(const float* src, uint16_t* dst, size_t n, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  F32ToF16K<<<GridFor(n), kThreads, 0, s>>>(src, dst, n);
  return cudaGetLastError();
}

cudaError_t CastF16ToF32(const uint16_t* src, float* dst, size_t n, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  F16ToF32K<<<GridFor(n), kThreads, 0, s>>>(src, dst, n);
  return cudaGetLastError();
}

cudaError_t CastMatrixF32ToBF16(const float* src, uint16_t* dst, int rows, int cols, int ld,
                                cudaStream_t s) {
  const size_t n = static_cast<size_t>(rows) * cols;
  if (n == 0) return cudaSuccess;
  MatF32ToBF16K<<<GridFor(n), kThreads, 0, s>>>(src, dst, rows, cols, ld);
  return cudaGetLastError();
}

}  // namespace zinf::cuda
