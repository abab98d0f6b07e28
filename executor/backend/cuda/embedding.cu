// Token + position embedding forward / backward.
#include "executor/backend/cuda/device_util.cuh"
#include "executor/backend/cuda/kernels.h"

namespace zinf::cuda {
namespace {

__global__ void EmbFwdK(const int32_t* tokens, const float* wte, const float* wpe, float* out,
                        int T, int C, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    const size_t r = i / C, c = i % C;
    out[i] = wte[static_cast<size_t>(tokens[r]) * C + c] + wpe[(r % T) * C + c];
  }
}

// dwte[tokens[r]] += dout[r]: atomicAdd (repeated tokens; the order of the additions, and
// so the last bits, may vary from run to run).
__global__ void EmbBwdTokK(const float* dout, const int32_t* tokens, float* dwte, int C, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    const size_t r = i / C, c = i % C;
    atomicAdd(dwte + static_cast<size_t>(tokens[r]) * C + c, dout[i]);
  }
}

// dwpe[t] += sum_b dout[b, t]: one thread per (t, c), batches in order (deterministic).
__global__ void EmbBwdPosK(const float* dout, float* dwpe, int B, int T, int C) {
  const size_t n = static_cast<size_t>(T) * C;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    float s = 0.0f;
    for (int b = 0; b < B; ++b) s += dout[static_cast<size_t>(b) * n + i];
    dwpe[i] += s;
  }
}

}  // namespace

cudaError_t EmbeddingFwd(const int32_t* tokens, const float* wte, const float* wpe, float* out,
                         int B, int T, int C, cudaStream_t s) {
  const size_t n = static_cast<size_t>(B) * T * C;
  if (n == 0) return cudaSuccess;
  EmbFwdK<<<GridFor(n), kThreads, 0, s>>>(tokens, wte, wpe, out, T, C, n);
  return cudaGetLastError();
}

cudaError_t EmbeddingBwd(const float* dout, const int32_t* tokens, float* dwte, float* dwpe,
                         int B, int T, int C, cudaStream_t s) {
  const size_t n = static_cast<size_t>(B) * T * C;
  if (n == 0) return cudaSuccess;
  EmbBwdTokK<<<GridFor(n), kThreads, 0, s>>>(dout, tokens, dwte, C, n);
  EmbBwdPosK<<<GridFor(static_cast<size_t>(T) * C), kThreads, 0, s>>>(dout, dwpe, B, T, C);
  return cudaGetLastError();
}

}  // namespace zinf::cuda
