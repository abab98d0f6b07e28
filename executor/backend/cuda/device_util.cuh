// Device helpers shared by the .cu kernels (nvcc only).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace zinf::cuda {

constexpr int kThreads = 256;  // block size of the elementwise and row kernels

// Blocks for a grid-stride loop over n elements (capped; the loop covers the rest).
inline unsigned GridFor(size_t n, int threads = kThreads) {
  size_t b = (n + threads - 1) / threads;
  if (b < 1) b = 1;
  if (b > 65535u * 8u) b = 65535u * 8u;
  return static_cast<unsigned>(b);
}

__device__ __forceinline__ float WarpSum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float WarpMax(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// Block-wide sum / max (blockDim.x a multiple of 32, <= 1024); every thread gets the
// result. `smem` holds 33 floats. Deterministic for a fixed blockDim.
__device__ __forceinline__ float BlockSum(float v, float* smem) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
  v = WarpSum(v);
  __syncthreads();  // smem may still be read by a previous reduction
  if (lane == 0) smem[warp] = v;
  __syncthreads();
  float t = lane < nw ? smem[lane] : 0.0f;
  if (warp == 0) {
    t = WarpSum(t);
    if (lane == 0) smem[32] = t;
  }
  __syncthreads();
  return smem[32];
}
__device__ __forceinline__ float BlockMax(float v, float* smem) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
  v = WarpMax(v);
  __syncthreads();
  if (lane == 0) smem[warp] = v;
  __syncthreads();
  float t = lane < nw ? smem[lane] : -INFINITY;
  if (warp == 0) {
    t = WarpMax(t);
    if (lane == 0) smem[32] = t;
  }
  __syncthreads();
  return smem[32];
}

}  // namespace zinf::cuda
