// Softmax cross-entropy forward / backward: one block per row.
#include "executor/backend/cuda/device_util.cuh"
#include "executor/backend/cuda/kernels.h"

namespace zinf::cuda {
namespace {

// Log-sum-exp of one row (every thread gets it).
__device__ float RowLse(const float* row, int V, float* smem) {
  float mx = -INFINITY;
  for (int j = threadIdx.x; j < V; j += blockDim.x) mx = fmaxf(mx, row[j]);
  mx = BlockMax(mx, smem);
  float s = 0.0f;
  for (int j = threadIdx.x; j < V; j += blockDim.x) s += expf(row[j] - mx);
  return mx + logf(BlockSum(s, smem));
}

__global__ void CeFwdK(const float* logits, const int32_t* targets, float* row_loss, int V) {
  __shared__ float smem[33];
  const size_t r = blockIdx.x;
  const float* row = logits + r * V;
  const float lse = RowLse(row, V, smem);
  if (threadIdx.x == 0) row_loss[r] = lse - row[targets[r]];
}

// Mean of row_loss in a fixed order: one block, per-thread strided sums in double, then a
// fixed tree (deterministic).
__global__ void MeanK(const float* row_loss, float* mean, int N) {
  __shared__ double sm[kThreads];
  double s = 0.0;
  for (int r = threadIdx.x; r < N; r += blockDim.x) s += row_loss[r];
  sm[threadIdx.x] = s;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w >>= 1) {
    if (threadIdx.x < w) sm[threadIdx.x] += sm[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) *mean = static_cast<float>(sm[0] / N);
}

// dlogits = scale * (softmax - onehot). In place is safe: the lse pass only reads, and
// each element is then read and written by the same thread.
__global__ void CeBwdK(const float* logits, const int32_t* targets, float* dlogits, float scale,
                       int V) {
  __shared__ float smem[33];
  const size_t r = blockIdx.x;
  const float* row = logits + r * V;
  float* drow = dlogits + r * V;
  const float lse = RowLse(row, V, smem);  // ends with __syncthreads: all reads done
  const int t = targets[r];
  for (int j = threadIdx.x; j < V; j += blockDim.x) {
    const float p = scale * expf(row[j] - lse);
    drow[j] = j == t ? p - scale : p;
  }
}

}  // namespace

cudaError_t CrossEntropyFwd(const float* logits, const int32_t* targets, float* row_loss,
                            float* mean_loss, int N, int V, cudaStream_t s) {
  if (N <= 0 || V <= 0) return cudaSuccess;
  CeFwdK<<<N, kThreads, 0, s>>>(logits, targets, row_loss, V);
  MeanK<<<1, kThreads, 0, s>>>(row_loss, mean_loss, N);
  return cudaGetLastError();
}

cudaError_t CrossEntropyBwd(const float* logits, const int32_t* targets, float* dlogits,
                            float dloss, int N, int V, cudaStream_t s) {
  if (N <= 0 || V <= 0) return cudaSuccess;
  CeBwdK<<<N, kThreads, 0, s>>>(logits, targets, dlogits, dloss / static_cast<float>(N), V);
  return cudaGetLastError();
}

}  // namespace zinf::cuda
