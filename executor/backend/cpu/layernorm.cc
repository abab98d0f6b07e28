// LayerNorm forward / backward over rows.
#include <cmath>

#include "executor/backend/cpu/kernels.h"
#include "executor/backend/cpu/parallel.h"

namespace zinf::cpu {
namespace {
constexpr size_t kMinParallel = 1 << 14;  // elements
}  // namespace

void LayerNormFwd(const float* x, const float* gamma, const float* beta, float* y, float* mean,
                  float* rstd, int rows, int cols, float eps, int threads) {
  const float inv_n = 1.0f / static_cast<float>(cols);
  ParallelChunks(rows, threads, kMinParallel / (cols + 1), [&](size_t b, size_t e) {
    for (size_t r = b; r < e; ++r) {
      const float* xr = x + r * cols;
      float* yr = y + r * cols;
      float s = 0.0f;
#pragma omp simd reduction(+ : s)
      for (int c = 0; c < cols; ++c) s += xr[c];
      const float mu = s * inv_n;
      float ss = 0.0f;
#pragma omp simd reduction(+ : ss)
      for (int c = 0; c < cols; ++c) {
        const float d = xr[c] - mu;
        ss += d * d;
      }
      const float rs = 1.0f / std::sqrt(ss * inv_n + eps);
#pragma omp simd
      for (int c = 0; c < cols; ++c) yr[c] = (xr[c] - mu) * rs * gamma[c] + beta[c];
      mean[r] = mu;
      rstd[r] = rs;
    }
  });
}

void LayerNormBwd(const float* dy, const float* x, const float* gamma, const float* mean,
                  const float* rstd, float* dx, float* dgamma, float* dbeta, int rows, int cols,
                  int threads) {
  const float inv_n = 1.0f / static_cast<float>(cols);
  // Pass 1 (rows in parallel): dx += rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dy*gamma.
  ParallelChunks(rows, threads, kMinParallel / (cols + 1), [&](size_t b, size_t e) {
    for (size_t r = b; r < e; ++r) {
      const float* xr = x + r * cols;
      const float* dyr = dy + r * cols;
      float* dxr = dx + r * cols;
      const float mu = mean[r], rs = rstd[r];
      float sg = 0.0f, sgx = 0.0f;
#pragma omp simd reduction(+ : sg, sgx)
      for (int c = 0; c < cols; ++c) {
        const float g = dyr[c] * gamma[c];
        sg += g;
        sgx += g * (xr[c] - mu) * rs;
      }
      const float mg = sg * inv_n, mgx = sgx * inv_n;
#pragma omp simd
      for (int c = 0; c < cols; ++c) {
        const float xhat = (xr[c] - mu) * rs;
        dxr[c] += rs * (dyr[c] * gamma[c] - mg - xhat * mgx);
      }
    }
  });
  // Pass 2 (columns in parallel, rows in order): parameter gradients.
  ParallelChunks(cols, threads, kMinParallel / (rows + 1) + 16, [&](size_t b, size_t e) {
    for (int r = 0; r < rows; ++r) {
      const float* xr = x + static_cast<size_t>(r) * cols;
      const float* dyr = dy + static_cast<size_t>(r) * cols;
      const float mu = mean[r], rs = rstd[r];
#pragma omp simd
      for (size_t c = b; c < e; ++c) {
        dgamma[c] += dyr[c] * (xr[c] - mu) * rs;
        dbeta[c] += dyr[c];
      }
    }
  });
}

}  // namespace zinf::cpu
