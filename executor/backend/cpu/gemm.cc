// GEMM via Eigen maps over row-major storage with explicit leading dimensions.
#include <Eigen/Core>

#include "executor/backend/cpu/kernels.h"

namespace zinf::cpu {
namespace {

using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MapC = Eigen::Map<const RowMat, Eigen::Unaligned, Eigen::OuterStride<>>;
using MapM = Eigen::Map<RowMat, Eigen::Unaligned, Eigen::OuterStride<>>;

template <typename OpA, typename OpB>
void Run(const OpA& a, const OpB& b, float alpha, float beta, MapM& c) {
  if (beta == 0.0f) {
    c.noalias() = alpha * a * b;
  } else {
    if (beta != 1.0f) c *= beta;
    c.noalias() += alpha * a * b;
  }
}

}  // namespace

void Gemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda,
          const float* b, int ldb, float beta, float* c, int ldc) {
  if (m <= 0 || n <= 0) return;
  MapM cm(c, m, n, Eigen::OuterStride<>(ldc));
  if (k <= 0) {
    if (beta == 0.0f) cm.setZero(); else cm *= beta;
    return;
  }
  // Stored shapes: A is (trans_a ? k x m : m x k), B is (trans_b ? n x k : k x n).
  MapC am(a, trans_a ? k : m, trans_a ? m : k, Eigen::OuterStride<>(lda));
  MapC bm(b, trans_b ? n : k, trans_b ? k : n, Eigen::OuterStride<>(ldb));
  if (!trans_a && !trans_b) Run(am, bm, alpha, beta, cm);
  else if (!trans_a && trans_b) Run(am, bm.transpose(), alpha, beta, cm);
  else if (trans_a && !trans_b) Run(am.transpose(), bm, alpha, beta, cm);
  else Run(am.transpose(), bm.transpose(), alpha, beta, cm);
}

}  // namespace zinf::cpu
