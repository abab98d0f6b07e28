// Branch-free float math that GCC auto-vectorizes inside `#pragma omp simd`
// loops (no libm calls, no -ffast-math needed). Accuracy ~1-2 ulp over the
// ranges the kernels use.
#pragma once

#include <cstdint>
#include <cstring>

namespace zinf::cpu {

inline float BitsToFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
inline uint32_t FloatToBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// e^x. Inputs are clamped to [-87, 88] (results below ~1.6e-38 flush to that).
inline float FastExp(float x) {
  x = x < -87.0f ? -87.0f : x;
  x = x > 88.0f ? 88.0f : x;
  constexpr float kShift = 12582912.0f;  // 1.5 * 2^23: rounds to an integer
  const float t = x * 1.44269504088896341f + kShift;
  const float n = t - kShift;
  const int32_t ni = static_cast<int32_t>(FloatToBits(t) - FloatToBits(kShift));
  float r = x - n * 0.693145751953125f;  // ln2 split in hi + lo for accuracy
  r = r - n * 1.428606765330187045e-06f;
  // e^r on |r| <= ln2/2: degree-6 Taylor, error < 2e-7 relative.
  float p = 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  return p * BitsToFloat(static_cast<uint32_t>((ni + 127) << 23));
}

inline float FastTanh(float x) {
  const float e = FastExp(2.0f * x);
  return 1.0f - 2.0f / (e + 1.0f);
}

}  // namespace zinf::cpu
