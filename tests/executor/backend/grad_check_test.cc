// Backward kernels against central finite differences of a random linear
// functional L = sum_i w_i * y_i of each forward kernel (L accumulated in double;
// the step uses the exactly representable perturbed fp32 values).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "tests/executor/backend/test_util.h"

namespace zinf {
namespace {

using testing::DevVec;
using testing::RandomVec;

double Dot(const float* y, const std::vector<float>& w) {
  double s = 0;
  for (size_t i = 0; i < w.size(); ++i) s += double(y[i]) * w[i];
  return s;
}

// Compares analytic[i] with (L(x_i + h) - L(x_i - h)) / (2h) for every i.
void CheckGrad(const char* what, float* x, size_t n, const std::function<double()>& loss,
               const std::vector<float>& analytic, float h = 1e-2f, double rtol = 1e-2,
               double atol = 1e-3) {
  ASSERT_EQ(analytic.size(), n);
  int bad = 0;
  for (size_t i = 0; i < n; ++i) {
    const float x0 = x[i];
    const float xp = x0 + h, xm = x0 - h;
    x[i] = xp;
    const double lp = loss();
    x[i] = xm;
    const double lm = loss();
    x[i] = x0;
    const double fd = (lp - lm) / (double(xp) - double(xm));
    const double an = analytic[i];
    if (std::abs(fd - an) > atol + rtol * std::max(std::abs(fd), std::abs(an))) {
      if (++bad < 5) ADD_FAILURE() << what << "[" << i << "]: analytic " << an << " vs fd " << fd;
    }
  }
  EXPECT_EQ(bad, 0) << what;
}

TEST(GradCheck, LayerNorm) {
  auto be = testing::TestBackend();
  const int rows = 4, cols = 10, n = rows * cols;
  DevVec<float> x(be.get(), n), g(be.get(), cols), b(be.get(), cols), y(be.get(), n),
      mean(be.get(), rows), rstd(be.get(), rows), dx(be.get(), n), dg(be.get(), cols),
      db(be.get(), cols);
  x.Set(RandomVec(n, 1, -2, 2));
  g.Set(RandomVec(cols, 2, 0.5, 1.5));
  b.Set(RandomVec(cols, 3));
  const std::vector<float> w = RandomVec(n, 4);
  auto loss = [&] {
    be->LayerNormFwd(x.data(), g.data(), b.data(), y.data(), mean.data(), rstd.data(), rows,
                     cols, 1e-5f);
    return Dot(y.data(), w);
  };
  loss();
  DevVec<float> dy(be.get(), n);
  dy.Set(w);
  // dx accumulates: start from a known value and subtract it.
  dx.Set(std::vector<float>(n, 0.5f));
  dg.Set(std::vector<float>(cols, 0.0f));
  db.Set(std::vector<float>(cols, 0.0f));
  be->LayerNormBwd(dy.data(), x.data(), g.data(), mean.data(), rstd.data(), dx.data(), dg.data(),
                   db.data(), rows, cols);
  std::vector<float> dxv = dx.Get();
  for (auto& v : dxv) v -= 0.5f;
  CheckGrad("dx", x.data(), n, loss, dxv, 1e-2f);
  CheckGrad("dgamma", g.data(), cols, loss, dg.Get());
  CheckGrad("dbeta", b.data(), cols, loss, db.Get());
}

TEST(GradCheck, Gelu) {
  auto be = testing::TestBackend();
  const int n = 200;
  DevVec<float> x(be.get(), n), y(be.get(), n), dx(be.get(), n), dy(be.get(), n);
  for (int i = 0; i < n; ++i) x[i] = -5.0f + 10.0f * (i + 0.5f) / n;
  const std::vector<float> w = RandomVec(n, 5);
  auto loss = [&] {
    be->GeluFwd(x.data(), y.data(), n);
    return Dot(y.data(), w);
  };
  dy.Set(w);
  be->GeluBwd(dy.data(), x.data(), dx.data(), n);
  CheckGrad("gelu dx", x.data(), n, loss, dx.Get(), 1e-3f, 1e-2, 1e-3);
  be->GeluBwd(dy.data(), x.data(), dy.data(), n);  // in place
  EXPECT_EQ(dy.Get(), dx.Get());
}

class AttentionGradTest : public ::testing::TestWithParam<int> {};  // T

TEST_P(AttentionGradTest, CausalAttention) {
  auto be = testing::TestBackend();
  const int T = GetParam(), B = T > 16 ? 1 : 2, C = 8, H = 2, n = B * T * 3 * C;
  DevVec<float> qkv(be.get(), n), out(be.get(), B * T * C), probs(be.get(), B * H * T * T),
      dout(be.get(), B * T * C), dqkv(be.get(), n);
  DevVec<float> ws(be.get(), be->AttentionWorkspaceBytes(B, T, C, H) / 4);
  qkv.Set(RandomVec(n, 6, -1.5, 1.5));
  const std::vector<float> w = RandomVec(B * T * C, 7);
  auto loss = [&] {
    be->AttentionFwd(qkv.data(), out.data(), probs.data(), B, T, C, H);
    return Dot(out.data(), w);
  };
  loss();
  dout.Set(w);
  dqkv.Set(std::vector<float>(n, 123.0f));  // overwritten
  be->AttentionBwd(dout.data(), qkv.data(), probs.data(), dqkv.data(), ws.data(), B, T, C, H);
  CheckGrad("dqkv", qkv.data(), n, loss, dqkv.Get(), 1e-2f);
}

INSTANTIATE_TEST_SUITE_P(SeqLens, AttentionGradTest, ::testing::Values(5, 70));  // 1 / 2 blocks

TEST(GradCheck, Embedding) {
  auto be = testing::TestBackend();
  const int B = 2, T = 4, C = 3, V = 5;
  DevVec<int32_t> tok(be.get(), B * T);
  const int ids[] = {1, 3, 1, 1, 0, 4, 3, 1};  // repeated tokens
  for (int i = 0; i < B * T; ++i) tok[i] = ids[i];
  DevVec<float> wte(be.get(), V * C), wpe(be.get(), T * C), out(be.get(), B * T * C),
      dout(be.get(), B * T * C), dwte(be.get(), V * C), dwpe(be.get(), T * C);
  wte.Set(RandomVec(V * C, 8));
  wpe.Set(RandomVec(T * C, 9));
  const std::vector<float> w = RandomVec(B * T * C, 10);
  auto loss = [&] {
    be->EmbeddingFwd(tok.data(), wte.data(), wpe.data(), out.data(), B, T, C);
    return Dot(out.data(), w);
  };
  dout.Set(w);
  dwte.Set(std::vector<float>(V * C, 0.0f));
  dwpe.Set(std::vector<float>(T * C, 0.0f));
  be->EmbeddingBwd(dout.data(), tok.data(), dwte.data(), dwpe.data(), B, T, C);
  CheckGrad("dwte", wte.data(), V * C, loss, dwte.Get());
  CheckGrad("dwpe", wpe.data(), T * C, loss, dwpe.Get());
}

TEST(GradCheck, CrossEntropy) {
  auto be = testing::TestBackend();
  const int N = 6, V = 7;
  DevVec<float> logits(be.get(), N * V), rl(be.get(), N), mean(be.get(), 1),
      dlogits(be.get(), N * V);
  DevVec<int32_t> tgt(be.get(), N);
  logits.Set(RandomVec(N * V, 11, -3, 3));
  for (int i = 0; i < N; ++i) tgt[i] = (5 * i + 2) % V;
  auto loss = [&] {
    be->CrossEntropyFwd(logits.data(), tgt.data(), rl.data(), mean.data(), N, V);
    double s = 0;  // the mean in double, for a precise difference quotient
    for (int i = 0; i < N; ++i) s += rl[i];
    return s / N;
  };
  be->CrossEntropyBwd(logits.data(), tgt.data(), dlogits.data(), 1.0f, N, V);
  CheckGrad("dlogits", logits.data(), N * V, loss, dlogits.Get(), 1e-2f, 1e-2, 1e-4);
  // In place and with a dloss scale.
  const std::vector<float> ref = dlogits.Get();
  be->CrossEntropyBwd(logits.data(), tgt.data(), logits.data(), 2.0f, N, V);
  for (int i = 0; i < N * V; ++i) ASSERT_FLOAT_EQ(logits[i], 2.0f * ref[i]);
}

TEST(GradCheck, LinearViaGemmAndBias) {
  // y = x W^T + b; dW += dy^T x; dx = dy W; db += colsum(dy): the model's linear.
  auto be = testing::TestBackend();
  const int N = 5, in = 6, out = 4;
  DevVec<float> x(be.get(), N * in), W(be.get(), out * in), b(be.get(), out), y(be.get(), N * out),
      dy(be.get(), N * out), dx(be.get(), N * in), dW(be.get(), out * in), db(be.get(), out);
  x.Set(RandomVec(N * in, 12));
  W.Set(RandomVec(out * in, 13));
  b.Set(RandomVec(out, 14));
  const std::vector<float> w = RandomVec(N * out, 15);
  auto loss = [&] {
    be->Gemm(false, true, N, out, in, 1.0f, x.data(), in, W.data(), in, 0.0f, y.data(), out);
    be->AddBias(y.data(), b.data(), N, out, out);
    return Dot(y.data(), w);
  };
  dy.Set(w);
  dW.Set(std::vector<float>(out * in, 0.0f));
  db.Set(std::vector<float>(out, 0.0f));
  be->Gemm(true, false, out, in, N, 1.0f, dy.data(), out, x.data(), in, 1.0f, dW.data(), in);
  be->Gemm(false, false, N, in, out, 1.0f, dy.data(), out, W.data(), in, 0.0f, dx.data(), in);
  be->BiasGrad(dy.data(), db.data(), N, out, out);
  CheckGrad("dx", x.data(), N * in, loss, dx.Get());
  CheckGrad("dW", W.data(), out * in, loss, dW.Get());
  CheckGrad("db", b.data(), out, loss, db.Get());
}

}  // namespace
}  // namespace zinf
