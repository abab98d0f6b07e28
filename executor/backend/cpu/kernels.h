// CPU reference kernels (fp32, row-major) used by CpuBackend; see backend.h for
// the contract of each. `threads` is the OpenMP team size for parallel loops.
// All reductions have a fixed order independent of `threads` except inside
// Eigen's GEMM, so results are bitwise reproducible run to run.
#pragma once

#include <cstddef>
#include <cstdint>

#include "executor/backend/backend.h"

namespace zinf::cpu {

void Gemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda,
          const float* b, int ldb, float beta, float* c, int ldc);
void AddBias(float* y, const float* bias, int rows, int cols, int ld, int threads);
void BiasInit(float* y, int ld, const float* bias, const float* residual, int ld_res, int rows,
              int cols, int threads);
void BiasGrad(const float* dy, float* dbias, int rows, int cols, int ld, int threads);
void Add(const float* a, const float* b, float* out, size_t n, int threads);
void Scale(float* x, float s, size_t n, int threads);

void LayerNormFwd(const float* x, const float* gamma, const float* beta, float* y, float* mean,
                  float* rstd, int rows, int cols, float eps, int threads);
void LayerNormBwd(const float* dy, const float* x, const float* gamma, const float* mean,
                  const float* rstd, float* dx, float* dgamma, float* dbeta, int rows, int cols,
                  int threads);

void GeluFwd(const float* x, float* y, size_t n, int threads);
void GeluBwd(const float* dy, const float* x, float* dx, size_t n, int threads);

void AttentionFwd(const float* qkv, float* out, float* probs, int B, int T, int C, int H,
                  int threads);
void AttentionBwd(const float* dout, const float* qkv, const float* probs, float* dqkv,
                  float* workspace, int B, int T, int C, int H, int threads);
size_t AttentionWorkspaceBytes(int B, int T, int C, int H, int threads);

void EmbeddingFwd(const int32_t* tokens, const float* wte, const float* wpe, float* out, int B,
                  int T, int C, int threads);
void EmbeddingBwd(const float* dout, const int32_t* tokens, float* dwte, float* dwpe, int B,
                  int T, int C, int threads);

void CrossEntropyFwd(const float* logits, const int32_t* targets, float* row_loss,
                     float* mean_loss, int N, int V, int threads);
void CrossEntropyBwd(const float* logits, const int32_t* targets, float* dlogits, float dloss,
                     int N, int V, int threads);

// AdamStep runs on one thread below this many elements (its ParallelChunks threshold).
inline constexpr size_t kAdamMinParallel = size_t{1} << 15;
void AdamStep(float* param, const float* grad, float* m, float* v, size_t n,
              const AdamParams& hp, int threads);

uint16_t F32ToBF16(float f);
float BF16ToF32(uint16_t h);
void CastF32ToBF16(const float* src, uint16_t* dst, size_t n, int threads);
void CastBF16ToF32(const uint16_t* src, float* dst, size_t n, int threads);

}  // namespace zinf::cpu
