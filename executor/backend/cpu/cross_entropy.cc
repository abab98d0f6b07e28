// Softmax cross-entropy (mean over rows) forward / backward.
#include <cmath>

#include "executor/backend/cpu/kernels.h"
#include "executor/backend/cpu/parallel.h"
#include "executor/backend/cpu/vec_math.h"

namespace zinf::cpu {
namespace {

// max and log-sum-exp of one row.
float RowLogSumExp(const float* row, int V, float* max_out) {
  float mx = row[0];
#pragma omp simd reduction(max : mx)
  for (int j = 0; j < V; ++j) mx = row[j] > mx ? row[j] : mx;
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int j = 0; j < V; ++j) sum += FastExp(row[j] - mx);
  *max_out = mx;
  return mx + std::log(sum);
}

}  // namespace

void CrossEntropyFwd(const float* logits, const int32_t* targets, float* row_loss,
                     float* mean_loss, int N, int V, int threads) {
  ParallelChunks(N, threads, (1 << 14) / (V + 1), [&](size_t lo, size_t hi) {
    for (size_t r = lo; r < hi; ++r) {
      const float* row = logits + r * V;
      float mx;
      row_loss[r] = RowLogSumExp(row, V, &mx) - row[targets[r]];
    }
  });
  double total = 0.0;  // serial, fixed order
  for (int r = 0; r < N; ++r) total += row_loss[r];
  *mean_loss = static_cast<float>(total / N);
}

void CrossEntropyBwd(const float* logits, const int32_t* targets, float* dlogits, float dloss,
                     int N, int V, int threads) {
  const float scale = dloss / static_cast<float>(N);
  ParallelChunks(N, threads, (1 << 14) / (V + 1), [&](size_t lo, size_t hi) {
    for (size_t r = lo; r < hi; ++r) {
      const float* row = logits + r * V;
      float* drow = dlogits + r * V;
      float mx;
      const float lse = RowLogSumExp(row, V, &mx);
      const int t = targets[r];
#pragma omp simd
      for (int j = 0; j < V; ++j) drow[j] = scale * FastExp(row[j] - lse);
      drow[t] -= scale;
    }
  });
}

}  // namespace zinf::cpu
