// Causal multi-head self-attention, simple and exact (no tiling, no flash): one block
// per (batch, head, query row). O(T^2 * head_size) work, probs materialised [B,H,T,T]
// as the Backend contract requires. Deterministic (no atomics).
#include "executor/backend/cuda/device_util.cuh"
#include "executor/backend/cuda/kernels.h"

namespace zinf::cuda {
namespace {

struct Geo {
  int B, T, C, H, hs;
  __device__ size_t Qkv(int b, int t, int h, int part) const {  // part: 0 q, 1 k, 2 v
    return (static_cast<size_t>(b) * T + t) * 3 * C + static_cast<size_t>(part) * C +
           static_cast<size_t>(h) * hs;
  }
  __device__ size_t Out(int b, int t, int h) const {
    return (static_cast<size_t>(b) * T + t) * C + static_cast<size_t>(h) * hs;
  }
  __device__ size_t Prob(int b, int h, int i) const {
    return ((static_cast<size_t>(b) * H + h) * T + i) * T;
  }
};

// grid (T, H, B). probs row i: softmax over j <= i of scale * q_i . k_j; zero for j > i.
__global__ void AttnFwdK(const float* qkv, float* out, float* probs, Geo g, float scale) {
  __shared__ float smem[33];
  const int i = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
  const float* q = qkv + g.Qkv(b, i, h, 0);
  float* prow = probs + g.Prob(b, h, i);
  float mx = -INFINITY;
  for (int j = threadIdx.x; j <= i; j += blockDim.x) {
    const float* k = qkv + g.Qkv(b, j, h, 1);
    float d = 0.0f;
    for (int e = 0; e < g.hs; ++e) d += q[e] * k[e];
    d *= scale;
    prow[j] = d;
    mx = fmaxf(mx, d);
  }
  mx = BlockMax(mx, smem);
  float sum = 0.0f;
  for (int j = threadIdx.x; j <= i; j += blockDim.x) {
    const float e = expf(prow[j] - mx);
    prow[j] = e;
    sum += e;
  }
  const float inv = 1.0f / BlockSum(sum, smem);  // BlockSum syncs: prow writes visible
  for (int j = threadIdx.x; j < g.T; j += blockDim.x) prow[j] = j <= i ? prow[j] * inv : 0.0f;
  __syncthreads();
  float* o = out + g.Out(b, i, h);
  for (int e = threadIdx.x; e < g.hs; e += blockDim.x) {
    float acc = 0.0f;
    for (int j = 0; j <= i; ++j) acc += prow[j] * qkv[g.Qkv(b, j, h, 2) + e];
    o[e] = acc;
  }
}

// grid (T, H, B), row i: dP_ij = dO_i . V_j; dS_ij = scale * P_ij * (dP_ij - sum_l P_il dP_il)
// into ws (same layout as probs); dQ_i = sum_j dS_ij K_j.
__global__ void AttnBwdQK(const float* dout, const float* qkv, const float* probs, float* dqkv,
                          float* ws, Geo g, float scale) {
  __shared__ float smem[33];
  const int i = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
  const float* prow = probs + g.Prob(b, h, i);
  float* dsrow = ws + g.Prob(b, h, i);
  const float* dO = dout + g.Out(b, i, h);
  float dot = 0.0f;
  for (int j = threadIdx.x; j <= i; j += blockDim.x) {
    const float* v = qkv + g.Qkv(b, j, h, 2);
    float d = 0.0f;
    for (int e = 0; e < g.hs; ++e) d += dO[e] * v[e];
    dsrow[j] = d;
    dot += prow[j] * d;
  }
  dot = BlockSum(dot, smem);
  for (int j = threadIdx.x; j <= i; j += blockDim.x) dsrow[j] = scale * prow[j] * (dsrow[j] - dot);
  __syncthreads();
  float* dq = dqkv + g.Qkv(b, i, h, 0);
  for (int e = threadIdx.x; e < g.hs; e += blockDim.x) {
    float acc = 0.0f;
    for (int j = 0; j <= i; ++j) acc += dsrow[j] * qkv[g.Qkv(b, j, h, 1) + e];
    dq[e] = acc;
  }
}

// grid (T, H, B), key row j: dK_j = sum_{i>=j} dS_ij Q_i; dV_j = sum_{i>=j} P_ij dO_i.
__global__ void AttnBwdKV(const float* dout, const float* qkv, const float* probs, float* dqkv,
                          const float* ws, Geo g) {
  const int j = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
  float* dk = dqkv + g.Qkv(b, j, h, 1);
  float* dv = dqkv + g.Qkv(b, j, h, 2);
  for (int e = threadIdx.x; e < g.hs; e += blockDim.x) {
    float ak = 0.0f, av = 0.0f;
    for (int i = j; i < g.T; ++i) {
      const size_t pij = g.Prob(b, h, i) + j;
      ak += ws[pij] * qkv[g.Qkv(b, i, h, 0) + e];
      av += probs[pij] * dout[g.Out(b, i, h) + e];
    }
    dk[e] = ak;
    dv[e] = av;
  }
}

int AttnThreads(int T, int hs) {
  int t = 32;
  const int want = T > hs ? T : hs;
  while (t < want && t < 256) t *= 2;
  return t;
}

}  // namespace

size_t AttentionWorkspaceBytes(int B, int T, int C, int H) {
  return static_cast<size_t>(B) * H * T * T * sizeof(float);
}

cudaError_t AttentionFwd(const float* qkv, float* out, float* probs, int B, int T, int C, int H,
                         cudaStream_t s) {
  if (B <= 0 || T <= 0 || C <= 0 || H <= 0) return cudaSuccess;
  const Geo g{B, T, C, H, C / H};
  const float scale = 1.0f / sqrtf(static_cast<float>(g.hs));
  const dim3 grid(T, H, B);
  AttnFwdK<<<grid, AttnThreads(T, g.hs), 0, s>>>(qkv, out, probs, g, scale);
  return cudaGetLastError();
}

cudaError_t AttentionBwd(const float* dout, const float* qkv, const float* probs, float* dqkv,
                         float* workspace, int B, int T, int C, int H, cudaStream_t s) {
  if (B <= 0 || T <= 0 || C <= 0 || H <= 0) return cudaSuccess;
  const Geo g{B, T, C, H, C / H};
  const float scale = 1.0f / sqrtf(static_cast<float>(g.hs));
  const dim3 grid(T, H, B);
  const int th = AttnThreads(T, g.hs);
  AttnBwdQK<<<grid, th, 0, s>>>(dout, qkv, probs, dqkv, workspace, g, scale);
  AttnBwdKV<<<grid, th, 0, s>>>(dout, qkv, probs, dqkv, workspace, g);
  return cudaGetLastError();
}

}  // namespace zinf::cuda
