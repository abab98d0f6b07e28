// Token + position embedding forward / backward.
#include "executor/backend/cpu/kernels.h"
#include "executor/backend/cpu/parallel.h"

namespace zinf::cpu {

void EmbeddingFwd(const int32_t* tokens, const float* wte, const float* wpe, float* out, int B,
                  int T, int C, int threads) {
  const size_t rows = static_cast<size_t>(B) * T;
  ParallelChunks(rows, threads, (1 << 14) / (C + 1), [&](size_t lo, size_t hi) {
    for (size_t r = lo; r < hi; ++r) {
      const float* te = wte + static_cast<size_t>(tokens[r]) * C;
      const float* pe = wpe + (r % T) * C;
      float* o = out + r * C;
#pragma omp simd
      for (int c = 0; c < C; ++c) o[c] = te[c] + pe[c];
    }
  });
}

void EmbeddingBwd(const float* dout, const int32_t* tokens, float* dwte, float* dwpe, int B,
                  int T, int C, int threads) {
  // Columns are split across threads; every row is visited in order, so repeated
  // tokens accumulate race-free and in a fixed order.
  const size_t rows = static_cast<size_t>(B) * T;
  ParallelChunks(C, threads, (1 << 14) / (rows + 1) + 16, [&](size_t lo, size_t hi) {
    for (size_t r = 0; r < rows; ++r) {
      const float* d = dout + r * C;
      float* te = dwte + static_cast<size_t>(tokens[r]) * C;
      float* pe = dwpe + (r % T) * C;
#pragma omp simd
      for (size_t c = lo; c < hi; ++c) {
        te[c] += d[c];
        pe[c] += d[c];
      }
    }
  });
}

}  // namespace zinf::cpu
