// Forward kernels against naive double-precision references.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "executor/backend/cpu/kernels.h"
#include "tests/executor/backend/test_util.h"

namespace zinf {
namespace {

using testing::DevVec;
using testing::RandomVec;

struct GemmCase {
  bool ta, tb;
  int m, n, k;
  float alpha, beta;
};

class GemmTest : public ::testing::TestWithParam<GemmCase> {};

TEST_P(GemmTest, MatchesNaive) {
  const GemmCase p = GetParam();
  auto be = testing::TestBackend();
  // Padded leading dimensions to exercise strides.
  const int a_rows = p.ta ? p.k : p.m, a_cols = p.ta ? p.m : p.k;
  const int b_rows = p.tb ? p.n : p.k, b_cols = p.tb ? p.k : p.n;
  const int lda = a_cols + 3, ldb = b_cols + 5, ldc = p.n + 2;
  DevVec<float> a(be.get(), a_rows * lda), b(be.get(), b_rows * ldb), c(be.get(), p.m * ldc);
  a.Set(RandomVec(a.size(), 1));
  b.Set(RandomVec(b.size(), 2));
  std::vector<float> c0 = RandomVec(c.size(), 3);
  if (p.beta == 0.0f) c0.assign(c.size(), std::numeric_limits<float>::quiet_NaN());
  c.Set(c0);
  be->Gemm(p.ta, p.tb, p.m, p.n, p.k, p.alpha, a.data(), lda, b.data(), ldb, p.beta, c.data(),
           ldc);
  for (int i = 0; i < p.m; ++i) {
    for (int j = 0; j < p.n; ++j) {
      double s = 0;
      for (int l = 0; l < p.k; ++l) {
        const double av = p.ta ? a[l * lda + i] : a[i * lda + l];
        const double bv = p.tb ? b[j * ldb + l] : b[l * ldb + j];
        s += av * bv;
      }
      double want = p.alpha * s + (p.beta == 0.0f ? 0.0 : p.beta * c0[i * ldc + j]);
      ASSERT_NEAR(c[i * ldc + j], want, 1e-4 * (1 + std::abs(want))) << i << "," << j;
    }
    for (int j = p.n; j < ldc; ++j) ASSERT_TRUE(std::isnan(c[i * ldc + j]) || c[i * ldc + j] == c0[i * ldc + j]);
  }
}

INSTANTIATE_TEST_SUITE_P(All, GemmTest,
                         ::testing::Values(GemmCase{false, false, 17, 13, 29, 1.0f, 0.0f},
                                           GemmCase{false, true, 64, 48, 33, 0.5f, 1.0f},
                                           GemmCase{true, false, 31, 70, 9, 1.0f, 0.25f},
                                           GemmCase{true, true, 5, 7, 128, -2.0f, 0.0f},
                                           GemmCase{false, false, 200, 150, 120, 1.0f, 1.0f}));

TEST(Kernels, BiasAddScale) {
  auto be = testing::TestBackend();
  const int rows = 7, cols = 5, ld = 9;
  DevVec<float> y(be.get(), rows * ld), bias(be.get(), cols), db(be.get(), cols);
  y.Set(RandomVec(y.size(), 4));
  bias.Set(RandomVec(cols, 5));
  db.Set(std::vector<float>(cols, 1.0f));
  auto y0 = y.Get();
  be->AddBias(y.data(), bias.data(), rows, cols, ld);
  be->BiasGrad(y0.data(), db.data(), rows, cols, ld);
  for (int c = 0; c < cols; ++c) {
    double s = 1.0;
    for (int r = 0; r < rows; ++r) {
      EXPECT_FLOAT_EQ(y[r * ld + c], y0[r * ld + c] + bias[c]);
      s += y0[r * ld + c];
    }
    EXPECT_NEAR(db[c], s, 1e-5);
  }
  for (int r = 0; r < rows; ++r) EXPECT_EQ(y[r * ld + cols], y0[r * ld + cols]);
  // BiasInit with and without a residual (residual aliasing y).
  DevVec<float> z(be.get(), rows * ld);
  be->BiasInit(z.data(), ld, bias.data(), nullptr, 0, rows, cols);
  be->BiasInit(y.data(), ld, bias.data(), y.data(), ld, rows, cols);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      EXPECT_EQ(z[r * ld + c], bias[c]);
      EXPECT_FLOAT_EQ(y[r * ld + c], y0[r * ld + c] + 2 * bias[c]);
    }
  DevVec<float> a(be.get(), 100), b(be.get(), 100);
  a.Set(RandomVec(100, 6));
  b.Set(RandomVec(100, 7));
  auto a0 = a.Get();
  be->Add(a.data(), b.data(), a.data(), 100);  // in place
  be->Scale(a.data(), 2.0f, 100);
  for (int i = 0; i < 100; ++i) EXPECT_FLOAT_EQ(a[i], 2.0f * (a0[i] + b[i]));
}

TEST(Kernels, LayerNormForward) {
  auto be = testing::TestBackend();
  const int rows = 6, cols = 37;
  DevVec<float> x(be.get(), rows * cols), g(be.get(), cols), b(be.get(), cols),
      y(be.get(), rows * cols), mean(be.get(), rows), rstd(be.get(), rows);
  x.Set(RandomVec(x.size(), 8, -3, 5));
  g.Set(RandomVec(cols, 9));
  b.Set(RandomVec(cols, 10));
  be->LayerNormFwd(x.data(), g.data(), b.data(), y.data(), mean.data(), rstd.data(), rows, cols,
                   1e-5f);
  for (int r = 0; r < rows; ++r) {
    double mu = 0, var = 0;
    for (int c = 0; c < cols; ++c) mu += x[r * cols + c];
    mu /= cols;
    for (int c = 0; c < cols; ++c) var += (x[r * cols + c] - mu) * (x[r * cols + c] - mu);
    var /= cols;
    const double rs = 1.0 / std::sqrt(var + 1e-5);
    EXPECT_NEAR(mean[r], mu, 1e-5);
    EXPECT_NEAR(rstd[r], rs, 1e-4 * rs);
    for (int c = 0; c < cols; ++c) {
      EXPECT_NEAR(y[r * cols + c], (x[r * cols + c] - mu) * rs * g[c] + b[c], 1e-5);
    }
  }
}

TEST(Kernels, GeluForwardMatchesTanhFormula) {
  auto be = testing::TestBackend();
  const int n = 2001;
  DevVec<float> x(be.get(), n), y(be.get(), n);
  for (int i = 0; i < n; ++i) x[i] = -10.0f + 0.01f * i;
  be->GeluFwd(x.data(), y.data(), n);
  for (int i = 0; i < n; ++i) {
    const double v = x[i];
    const double want = 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
    ASSERT_NEAR(y[i], want, 2e-6 * (1 + std::abs(want))) << v;
  }
}

class AttentionFwdTest : public ::testing::TestWithParam<int> {};  // T

TEST_P(AttentionFwdTest, MatchesNaive) {
  auto be = testing::TestBackend();
  const int B = 2, T = GetParam(), C = 12, H = 3, hs = C / H;
  DevVec<float> qkv(be.get(), B * T * 3 * C), out(be.get(), B * T * C),
      probs(be.get(), B * H * T * T);
  qkv.Set(RandomVec(qkv.size(), 11, -2, 2));
  be->AttentionFwd(qkv.data(), out.data(), probs.data(), B, T, C, H);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h)
      for (int i = 0; i < T; ++i) {
        std::vector<double> s(T, 0.0);
        double mx = -1e30;
        for (int j = 0; j <= i; ++j) {
          for (int d = 0; d < hs; ++d)
            s[j] += qkv[(b * T + i) * 3 * C + h * hs + d] * qkv[(b * T + j) * 3 * C + C + h * hs + d];
          s[j] /= std::sqrt(double(hs));
          mx = std::max(mx, s[j]);
        }
        double sum = 0;
        for (int j = 0; j <= i; ++j) sum += (s[j] = std::exp(s[j] - mx));
        for (int j = 0; j <= i; ++j) {
          const double p = s[j] / sum;
          ASSERT_NEAR(probs[((b * H + h) * T + i) * T + j], p, 1e-6);
        }
        for (int d = 0; d < hs; ++d) {
          double o = 0;
          for (int j = 0; j <= i; ++j) o += s[j] / sum * qkv[(b * T + j) * 3 * C + 2 * C + h * hs + d];
          ASSERT_NEAR(out[(b * T + i) * C + h * hs + d], o, 1e-5);
        }
      }
}

// 9: one block; 150: several row blocks with a partial last one; 600: 128-row blocks.
INSTANTIATE_TEST_SUITE_P(SeqLens, AttentionFwdTest, ::testing::Values(9, 150, 600));

TEST(Kernels, EmbeddingAndCrossEntropyForward) {
  auto be = testing::TestBackend();
  const int B = 2, T = 3, C = 4, V = 11;
  DevVec<int32_t> tok(be.get(), B * T);
  DevVec<float> wte(be.get(), V * C), wpe(be.get(), T * C), out(be.get(), B * T * C);
  for (int i = 0; i < B * T; ++i) tok[i] = (i * 7) % V;
  wte.Set(RandomVec(wte.size(), 12));
  wpe.Set(RandomVec(wpe.size(), 13));
  be->EmbeddingFwd(tok.data(), wte.data(), wpe.data(), out.data(), B, T, C);
  for (int r = 0; r < B * T; ++r)
    for (int c = 0; c < C; ++c)
      EXPECT_FLOAT_EQ(out[r * C + c], wte[tok[r] * C + c] + wpe[(r % T) * C + c]);

  const int N = 5;
  DevVec<float> logits(be.get(), N * V), rl(be.get(), N), mean(be.get(), 1);
  DevVec<int32_t> tgt(be.get(), N);
  logits.Set(RandomVec(logits.size(), 14, -4, 4));
  for (int i = 0; i < N; ++i) tgt[i] = (3 * i + 1) % V;
  be->CrossEntropyFwd(logits.data(), tgt.data(), rl.data(), mean.data(), N, V);
  double total = 0;
  for (int r = 0; r < N; ++r) {
    double mx = -1e30, s = 0;
    for (int j = 0; j < V; ++j) mx = std::max(mx, double(logits[r * V + j]));
    for (int j = 0; j < V; ++j) s += std::exp(logits[r * V + j] - mx);
    const double want = mx + std::log(s) - logits[r * V + tgt[r]];
    EXPECT_NEAR(rl[r], want, 1e-5);
    total += want;
  }
  EXPECT_NEAR(mean[0], total / N, 1e-5);
}

TEST(Kernels, AdamMatchesScalarReference) {
  auto be = testing::TestBackend();
  const int n = 1000;
  DevVec<float> p(be.get(), n), g(be.get(), n), m(be.get(), n), v(be.get(), n);
  p.Set(RandomVec(n, 15));
  g.Set(RandomVec(n, 16));
  m.Set(std::vector<float>(n, 0.0f));
  v.Set(std::vector<float>(n, 0.0f));
  std::vector<double> rp(p.data(), p.data() + n), rm(n, 0), rv(n, 0);
  AdamParams hp;
  hp.lr = 1e-2f;
  hp.weight_decay = 0.1f;
  hp.grad_scale = 0.5f;
  for (int step = 1; step <= 3; ++step) {
    hp.step = step;
    be->AdamStep(p.data(), g.data(), m.data(), v.data(), n, hp);
    for (int i = 0; i < n; ++i) {
      const double gi = 0.5 * g[i];
      rm[i] = 0.9 * rm[i] + 0.1 * gi;
      rv[i] = 0.999 * rv[i] + 0.001 * gi * gi;
      const double mh = rm[i] / (1 - std::pow(0.9, step)), vh = rv[i] / (1 - std::pow(0.999, step));
      rp[i] = rp[i] * (1 - 1e-2 * 0.1) - 1e-2 * mh / (std::sqrt(vh) + 1e-8);
    }
  }
  for (int i = 0; i < n; ++i) ASSERT_NEAR(p[i], rp[i], 1e-5);
}

TEST(Kernels, Bf16RoundToNearestEven) {
  using cpu::BF16ToF32;
  using cpu::F32ToBF16;
  EXPECT_EQ(F32ToBF16(1.0f), 0x3f80);
  // 1 + 2^-8 is exactly halfway between 1 and 1 + 2^-7: ties to even (1.0).
  EXPECT_EQ(F32ToBF16(1.0f + 1.0f / 256), 0x3f80);
  // 1 + 3*2^-8 is halfway between 1+2^-7 (odd) and 1+2^-6 (even): rounds up.
  EXPECT_EQ(F32ToBF16(1.0f + 3.0f / 256), 0x3f82);
  EXPECT_EQ(F32ToBF16(1.0f + 1.0f / 256 + 1.0f / 65536), 0x3f81);  // above half
  EXPECT_EQ(F32ToBF16(-2.0f), 0xc000);
  EXPECT_EQ(F32ToBF16(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_TRUE(std::isnan(BF16ToF32(F32ToBF16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(F32ToBF16(3.4e38f), 0x7f80);  // overflows to inf when rounding up
  auto be = testing::TestBackend();
  const int n = 4096;
  DevVec<float> x(be.get(), n), y(be.get(), n);
  DevVec<uint16_t> h(be.get(), n);
  x.Set(RandomVec(n, 17, -100, 100));
  be->CastF32ToBF16(x.data(), h.data(), n);
  be->CastBF16ToF32(h.data(), y.data(), n);
  for (int i = 0; i < n; ++i) ASSERT_NEAR(y[i], x[i], std::abs(x[i]) * (1.0 / 256));
}

}  // namespace
}  // namespace zinf
