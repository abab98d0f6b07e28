// Bias, residual add, scale, GELU (tanh approximation).
#include <cmath>

#include "executor/backend/cpu/kernels.h"
#include "executor/backend/cpu/parallel.h"
#include "executor/backend/cpu/vec_math.h"

namespace zinf::cpu {
namespace {
constexpr size_t kMinParallel = 1 << 15;  // elements
constexpr float kGeluK = 0.7978845608028654f;  // sqrt(2/pi)
constexpr float kGeluC = 0.044715f;
}  // namespace

void AddBias(float* y, const float* bias, int rows, int cols, int ld, int threads) {
  ParallelChunks(rows, threads, kMinParallel / (cols + 1), [&](size_t b, size_t e) {
    for (size_t r = b; r < e; ++r) {
      float* row = y + r * ld;
#pragma omp simd
      for (int c = 0; c < cols; ++c) row[c] += bias[c];
    }
  });
}

void BiasInit(float* y, int ld, const float* bias, const float* residual, int ld_res, int rows,
              int cols, int threads) {
  ParallelChunks(rows, threads, kMinParallel / (cols + 1), [&](size_t b, size_t e) {
    for (size_t r = b; r < e; ++r) {
      float* row = y + r * ld;
      if (residual == nullptr) {
#pragma omp simd
        for (int c = 0; c < cols; ++c) row[c] = bias[c];
      } else {
        const float* res = residual + r * ld_res;
#pragma omp simd
        for (int c = 0; c < cols; ++c) row[c] = bias[c] + res[c];
      }
    }
  });
}

void BiasGrad(const float* dy, float* dbias, int rows, int cols, int ld, int threads) {
  // Split columns across threads: each column is summed over rows in order,
  // so the result does not depend on the thread count.
  const size_t min_cols = (kMinParallel / (rows + 1)) + 16;
  ParallelChunks(cols, threads, min_cols, [&](size_t b, size_t e) {
    for (int r = 0; r < rows; ++r) {
      const float* row = dy + static_cast<size_t>(r) * ld;
#pragma omp simd
      for (size_t c = b; c < e; ++c) dbias[c] += row[c];
    }
  });
}

void Add(const float* a, const float* b, float* out, size_t n, int threads) {
  ParallelChunks(n, threads, kMinParallel, [&](size_t lo, size_t hi) {
#pragma omp simd
    for (size_t i = lo; i < hi; ++i) out[i] = a[i] + b[i];
  });
}

void Scale(float* x, float s, size_t n, int threads) {
  ParallelChunks(n, threads, kMinParallel, [&](size_t lo, size_t hi) {
#pragma omp simd
    for (size_t i = lo; i < hi; ++i) x[i] *= s;
  });
}

void GeluFwd(const float* x, float* y, size_t n, int threads) {
  ParallelChunks(n, threads, kMinParallel, [&](size_t lo, size_t hi) {
#pragma omp simd
    for (size_t i = lo; i < hi; ++i) {
      const float v = x[i];
      const float u = kGeluK * (v + kGeluC * v * v * v);
      y[i] = 0.5f * v * (1.0f + FastTanh(u));
    }
  });
}

void GeluBwd(const float* dy, const float* x, float* dx, size_t n, int threads) {
  ParallelChunks(n, threads, kMinParallel, [&](size_t lo, size_t hi) {
#pragma omp simd
    for (size_t i = lo; i < hi; ++i) {
      const float v = x[i];
      const float u = kGeluK * (v + kGeluC * v * v * v);
      const float th = FastTanh(u);
      const float du = kGeluK * (1.0f + 3.0f * kGeluC * v * v);
      const float g = 0.5f * (1.0f + th) + 0.5f * v * (1.0f - th * th) * du;
      dx[i] = dy[i] * g;
    }
  });
}

}  // namespace zinf::cpu
