// Causal multi-head self-attention, parallel over (batch, head) pairs; each
// pair runs blocked Eigen GEMMs over its causal region.
#include <Eigen/Core>
#include <cmath>
#include <limits>
#include <algorithm>

#include "executor/backend/cpu/kernels.h"
#include "executor/backend/cpu/parallel.h"
#include "executor/backend/cpu/vec_math.h"

namespace zinf::cpu {
namespace {

using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MapC = Eigen::Map<const RowMat, Eigen::Unaligned, Eigen::OuterStride<>>;
using MapM = Eigen::Map<RowMat, Eigen::Unaligned, Eigen::OuterStride<>>;

struct Geometry {
  int B, T, C, H, hs;
  size_t QkvOffset(int b, int h, int part) const {  // part: 0 q, 1 k, 2 v
    return static_cast<size_t>(b) * T * 3 * C + static_cast<size_t>(part) * C +
           static_cast<size_t>(h) * hs;
  }
  size_t OutOffset(int b, int h) const {
    return static_cast<size_t>(b) * T * C + static_cast<size_t>(h) * hs;
  }
};

// Queries are processed in row blocks (BlockRows): block [r0, r1) attends to keys
// [0, r1), so every product is a plain GEMM and only the diagonal block wastes
// work (masked). Row i touches columns [0, i]; loops run to a padded length
// (multiple of 16, at most r1) so they stay fully vectorized.
// Smaller blocks waste less on the diagonal, larger ones run faster GEMMs.
inline int BlockRows(int T) { return T <= 512 ? std::min(T, 64) : 128; }

inline int PaddedLen(int i, int end) { return std::min(end, (i + 16) & ~15); }

// Rows [r0, r1) of s (stride T, columns [0, r1) filled with scores): causal
// softmax in place; columns (i, r1) become 0, columns >= r1 are not touched.
void CausalSoftmaxRows(float* s, int T, int r0, int r1) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  for (int i = r0; i < r1; ++i) {
    float* row = s + static_cast<size_t>(i) * T;
    const int len = PaddedLen(i, r1);
    float mx = kNegInf;
#pragma omp simd reduction(max : mx)
    for (int j = 0; j < len; ++j) {
      const float v = j <= i ? row[j] : kNegInf;
      mx = v > mx ? v : mx;
    }
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (int j = 0; j < len; ++j) {
      const float e = j <= i ? FastExp(row[j] - mx) : 0.0f;
      row[j] = e;
      sum += e;
    }
    const float inv = 1.0f / sum;
#pragma omp simd
    for (int j = 0; j < len; ++j) row[j] *= inv;
    for (int j = len; j < r1; ++j) row[j] = 0.0f;
  }
}

}  // namespace

size_t AttentionWorkspaceBytes(int B, int T, int C, int H, int threads) {
  const int nt = threads < 1 ? 1 : threads;
  return static_cast<size_t>(nt) * BlockRows(T) * T * sizeof(float);
}

void AttentionFwd(const float* qkv, float* out, float* probs, int B, int T, int C, int H,
                  int threads) {
  const Geometry g{B, T, C, H, C / H};
  const float scale = 1.0f / std::sqrt(static_cast<float>(g.hs));
  const size_t pairs = static_cast<size_t>(B) * H;
  ParallelChunks(pairs, threads, 2, [&](size_t lo, size_t hi) {
    for (size_t p = lo; p < hi; ++p) {
      const int b = static_cast<int>(p / H), h = static_cast<int>(p % H);
      MapC q(qkv + g.QkvOffset(b, h, 0), T, g.hs, Eigen::OuterStride<>(3 * C));
      MapC k(qkv + g.QkvOffset(b, h, 1), T, g.hs, Eigen::OuterStride<>(3 * C));
      MapC v(qkv + g.QkvOffset(b, h, 2), T, g.hs, Eigen::OuterStride<>(3 * C));
      MapM o(out + g.OutOffset(b, h), T, g.hs, Eigen::OuterStride<>(C));
      float* pp = probs + p * T * T;
      const int block = BlockRows(T);
      for (int r0 = 0; r0 < T; r0 += block) {
        const int rb = std::min(block, T - r0), r1 = r0 + rb;
        MapM s(pp + static_cast<size_t>(r0) * T, rb, r1, Eigen::OuterStride<>(T));
        s.noalias() = (scale * q.middleRows(r0, rb)) * k.topRows(r1).transpose();
        CausalSoftmaxRows(pp, T, r0, r1);
        o.middleRows(r0, rb).noalias() = s * v.topRows(r1);
      }
    }
  });
}

void AttentionBwd(const float* dout, const float* qkv, const float* probs, float* dqkv,
                  float* workspace, int B, int T, int C, int H, int threads) {
  const Geometry g{B, T, C, H, C / H};
  const float scale = 1.0f / std::sqrt(static_cast<float>(g.hs));
  const size_t pairs = static_cast<size_t>(B) * H;
  ParallelChunks(pairs, threads, 2, [&](size_t lo, size_t hi) {
    float* ws = workspace + static_cast<size_t>(ThreadIndex()) * BlockRows(T) * T;
    for (size_t p = lo; p < hi; ++p) {
      const int b = static_cast<int>(p / H), h = static_cast<int>(p % H);
      MapC q(qkv + g.QkvOffset(b, h, 0), T, g.hs, Eigen::OuterStride<>(3 * C));
      MapC k(qkv + g.QkvOffset(b, h, 1), T, g.hs, Eigen::OuterStride<>(3 * C));
      MapC v(qkv + g.QkvOffset(b, h, 2), T, g.hs, Eigen::OuterStride<>(3 * C));
      MapC dout_h(dout + g.OutOffset(b, h), T, g.hs, Eigen::OuterStride<>(C));
      MapM dq(dqkv + g.QkvOffset(b, h, 0), T, g.hs, Eigen::OuterStride<>(3 * C));
      MapM dk(dqkv + g.QkvOffset(b, h, 1), T, g.hs, Eigen::OuterStride<>(3 * C));
      MapM dv(dqkv + g.QkvOffset(b, h, 2), T, g.hs, Eigen::OuterStride<>(3 * C));
      dk.setZero();
      dv.setZero();
      const float* pp = probs + p * T * T;
      const int block = BlockRows(T);
      for (int r0 = 0; r0 < T; r0 += block) {
        const int rb = std::min(block, T - r0), r1 = r0 + rb;
        MapC pm(pp + static_cast<size_t>(r0) * T, rb, r1, Eigen::OuterStride<>(T));
        MapM ds(ws, rb, r1, Eigen::OuterStride<>(r1));
        const auto dout_b = dout_h.middleRows(r0, rb);
        // dV += P^T dO; dP = dO V^T.
        dv.topRows(r1).noalias() += pm.transpose() * dout_b;
        ds.noalias() = dout_b * v.topRows(r1).transpose();
        // dS = scale * P * (dP - rowsum(P * dP)); P is 0 above the diagonal.
        for (int i = r0; i < r1; ++i) {
          const float* pr = pp + static_cast<size_t>(i) * T;
          float* dr = ws + static_cast<size_t>(i - r0) * r1;
          const int len = PaddedLen(i, r1);
          float dot = 0.0f;
#pragma omp simd reduction(+ : dot)
          for (int j = 0; j < len; ++j) dot += pr[j] * dr[j];
#pragma omp simd
          for (int j = 0; j < r1; ++j) dr[j] = scale * pr[j] * (dr[j] - dot);
        }
        // dQ = dS K; dK += dS^T Q.
        dq.middleRows(r0, rb).noalias() = ds * k.topRows(r1);
        dk.topRows(r1).noalias() += ds.transpose() * q.middleRows(r0, rb);
      }
    }
  });
}

}  // namespace zinf::cpu
