// Adam(W) step and fp32 <-> bf16 casts.
#include <cmath>

#include "executor/backend/cpu/kernels.h"
#include "executor/backend/cpu/parallel.h"
#include "executor/backend/cpu/vec_math.h"

namespace zinf::cpu {
namespace {
constexpr size_t kMinParallel = 1 << 15;
}  // namespace

void AdamStep(float* param, const float* grad, float* m, float* v, size_t n,
              const AdamParams& hp, int threads) {
  const double t = static_cast<double>(hp.step < 1 ? 1 : hp.step);
  const float bc1 = static_cast<float>(1.0 / (1.0 - std::pow(double{hp.beta1}, t)));
  const float bc2 = static_cast<float>(1.0 / (1.0 - std::pow(double{hp.beta2}, t)));
  const float b1 = hp.beta1, b2 = hp.beta2, lr = hp.lr, eps = hp.eps;
  const float decay = 1.0f - hp.lr * hp.weight_decay, gs = hp.grad_scale;
  ParallelChunks(n, threads, kAdamMinParallel, [&](size_t lo, size_t hi) {
#pragma omp simd
    for (size_t i = lo; i < hi; ++i) {
      const float g = grad[i] * gs;
      const float mi = b1 * m[i] + (1.0f - b1) * g;
      const float vi = b2 * v[i] + (1.0f - b2) * g * g;
      m[i] = mi;
      v[i] = vi;
      const float update = (mi * bc1) / (std::sqrt(vi * bc2) + eps);
      param[i] = param[i] * decay - lr * update;
    }
  });
}

uint16_t F32ToBF16(float f) {
  const uint32_t u = FloatToBits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);  // NaN
  const uint32_t rounding = 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>((u + rounding) >> 16);
}

float BF16ToF32(uint16_t h) { return BitsToFloat(static_cast<uint32_t>(h) << 16); }

void CastF32ToBF16(const float* src, uint16_t* dst, size_t n, int threads) {
  ParallelChunks(n, threads, kMinParallel, [&](size_t lo, size_t hi) {
#pragma omp simd
    for (size_t i = lo; i < hi; ++i) dst[i] = F32ToBF16(src[i]);
  });
}

void CastBF16ToF32(const uint16_t* src, float* dst, size_t n, int threads) {
  ParallelChunks(n, threads, kMinParallel, [&](size_t lo, size_t hi) {
#pragma omp simd
    for (size_t i = lo; i < hi; ++i) dst[i] = BF16ToF32(src[i]);
  });
}

}  // namespace zinf::cpu
