// Every CUDA kernel against the CPU reference backend on the same random inputs:
// GEMM (fp32 / tf32 / bf16), bias / residual / add / scale, GELU, Adam(W), casts.
// Tolerances: fp32 ~1e-5 relative, tf32 ~1e-3, bf16 ~1e-2 (GEMMs: scaled by sqrt(k)).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <tuple>

#include "tests/executor/cuda/cuda_test_util.h"

namespace zinf {
namespace {

using cudatest::Close;
using cudatest::RandomVec;
using cudatest::Twin;

class CudaVsCpu : public ::testing::Test {
 protected:
  void SetUp() override {
    ref_ = cudatest::CpuReference();
    dev_ = cudatest::DeviceBackend();
    ASSERT_NE(dev_, nullptr);
  }
  std::unique_ptr<Backend> ref_, dev_;
};

struct GemmCase {
  bool ta, tb;
  int m, n, k;
  float alpha, beta;
};

class GemmVsCpu : public ::testing::TestWithParam<std::tuple<GemmPrecision, GemmCase>> {};

TEST_P(GemmVsCpu, Matches) {
  const auto [prec, p] = GetParam();
  auto ref = cudatest::CpuReference();
  auto dev = cudatest::DeviceBackend();
  ASSERT_NE(dev, nullptr);
  if (CudaBackend* cu = AsCuda(dev.get())) {
    cu->set_gemm_precision(prec);
    EXPECT_EQ(cu->gemm_precision(), prec);
  } else if (prec != GemmPrecision::kFp32) {
    GTEST_SKIP() << "precision modes need the CUDA backend";
  }
  const int a_rows = p.ta ? p.k : p.m, a_cols = p.ta ? p.m : p.k;
  const int b_rows = p.tb ? p.n : p.k, b_cols = p.tb ? p.k : p.n;
  const int lda = a_cols + 3, ldb = b_cols + 5, ldc = p.n + 2;
  Twin<float> a(ref.get(), dev.get(), RandomVec(static_cast<size_t>(a_rows) * lda, 1));
  Twin<float> b(ref.get(), dev.get(), RandomVec(static_cast<size_t>(b_rows) * ldb, 2));
  std::vector<float> c0 = RandomVec(static_cast<size_t>(p.m) * ldc, 3);
  if (p.beta == 0.0f) {  // beta == 0 must ignore C (NaN-safe), padding must stay untouched
    for (int i = 0; i < p.m; ++i)
      for (int j = 0; j < p.n; ++j) c0[static_cast<size_t>(i) * ldc + j] = std::numeric_limits<float>::quiet_NaN();
  }
  Twin<float> c(ref.get(), dev.get(), c0);
  ref->Gemm(p.ta, p.tb, p.m, p.n, p.k, p.alpha, a.R(), lda, b.R(), ldb, p.beta, c.R(), ldc);
  dev->Gemm(p.ta, p.tb, p.m, p.n, p.k, p.alpha, a.D(), lda, b.D(), ldb, p.beta, c.D(), ldc);
  const double tol = prec == GemmPrecision::kFp32 ? 1e-5 : prec == GemmPrecision::kTf32 ? 1e-3 : 1e-2;
  const double scale = std::sqrt(static_cast<double>(std::max(p.k, 1))) * std::abs(p.alpha);
  auto want = c.GetR(), got = c.GetD();
  std::vector<bool> inside(want.size(), false);
  for (int i = 0; i < p.m; ++i)
    for (int j = 0; j < p.n; ++j) inside[static_cast<size_t>(i) * ldc + j] = true;
  EXPECT_TRUE(Close(want, got, 10 * tol, tol * scale, &inside));
  for (size_t i = 0; i < got.size(); ++i) {
    if (!inside[i]) {
      ASSERT_EQ(std::memcmp(&got[i], &c0[i], 4), 0) << "padding written at " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    All, GemmVsCpu,
    ::testing::Combine(::testing::Values(GemmPrecision::kFp32, GemmPrecision::kTf32, GemmPrecision::kBf16),
                       ::testing::Values(GemmCase{false, false, 17, 13, 29, 1.0f, 0.0f},
                                         GemmCase{false, true, 64, 48, 33, 0.5f, 1.0f},
                                         GemmCase{true, false, 31, 70, 9, 1.0f, 0.25f},
                                         GemmCase{true, true, 5, 7, 128, -2.0f, 0.0f},
                                         GemmCase{false, false, 200, 150, 120, 1.0f, 1.0f},
                                         GemmCase{false, true, 256, 384, 512, 1.0f, 0.0f},
                                         GemmCase{true, false, 33, 17, 0, 1.0f, 0.0f},
                                         GemmCase{false, false, 9, 11, 0, 1.0f, 0.5f})));

TEST_F(CudaVsCpu, BiasAddScale) {
  const int rows = 37, cols = 301, ld = 305;
  Twin<float> y(ref_.get(), dev_.get(), RandomVec(static_cast<size_t>(rows) * ld, 4));
  Twin<float> bias(ref_.get(), dev_.get(), RandomVec(cols, 5));
  Twin<float> db(ref_.get(), dev_.get(), RandomVec(cols, 6));
  ref_->AddBias(y.R(), bias.R(), rows, cols, ld);
  dev_->AddBias(y.D(), bias.D(), rows, cols, ld);
  EXPECT_TRUE(Close(y.GetR(), y.GetD(), 1e-6, 0));
  ref_->BiasGrad(y.R(), db.R(), rows, cols, ld);
  dev_->BiasGrad(y.D(), db.D(), rows, cols, ld);
  EXPECT_TRUE(Close(db.GetR(), db.GetD(), 1e-5, 1e-5));
  // BiasInit: without a residual, with one, and with the residual aliasing y.
  Twin<float> res(ref_.get(), dev_.get(), RandomVec(static_cast<size_t>(rows) * ld, 7));
  Twin<float> y2(ref_.get(), dev_.get(), RandomVec(static_cast<size_t>(rows) * ld, 8));
  ref_->BiasInit(y2.R(), ld, bias.R(), nullptr, ld, rows, cols);
  dev_->BiasInit(y2.D(), ld, bias.D(), nullptr, ld, rows, cols);
  EXPECT_TRUE(Close(y2.GetR(), y2.GetD(), 0, 0));
  ref_->BiasInit(y2.R(), ld, bias.R(), res.R(), ld, rows, cols);
  dev_->BiasInit(y2.D(), ld, bias.D(), res.D(), ld, rows, cols);
  EXPECT_TRUE(Close(y2.GetR(), y2.GetD(), 0, 0));
  ref_->BiasInit(res.R(), ld, bias.R(), res.R(), ld, rows, cols);
  dev_->BiasInit(res.D(), ld, bias.D(), res.D(), ld, rows, cols);
  EXPECT_TRUE(Close(res.GetR(), res.GetD(), 0, 0));
  // Add (aliased output) and Scale, over a size that is not a multiple of anything.
  const size_t n = 100003;
  Twin<float> a(ref_.get(), dev_.get(), RandomVec(n, 9)), b(ref_.get(), dev_.get(), RandomVec(n, 10));
  Twin<float> out(ref_.get(), dev_.get(), std::vector<float>(n, 0.0f));
  ref_->Add(a.R(), b.R(), out.R(), n);
  dev_->Add(a.D(), b.D(), out.D(), n);
  EXPECT_TRUE(Close(out.GetR(), out.GetD(), 0, 0));
  ref_->Add(a.R(), b.R(), a.R(), n);
  dev_->Add(a.D(), b.D(), a.D(), n);
  EXPECT_TRUE(Close(a.GetR(), a.GetD(), 0, 0));
  ref_->Scale(b.R(), -0.37f, n);
  dev_->Scale(b.D(), -0.37f, n);
  EXPECT_TRUE(Close(b.GetR(), b.GetD(), 0, 0));
}

TEST_F(CudaVsCpu, Gelu) {
  const size_t n = 65537;
  Twin<float> x(ref_.get(), dev_.get(), RandomVec(n, 11, -6.0f, 6.0f));
  Twin<float> y(ref_.get(), dev_.get(), std::vector<float>(n, 0.0f));
  Twin<float> dy(ref_.get(), dev_.get(), RandomVec(n, 12));
  ref_->GeluFwd(x.R(), y.R(), n);
  dev_->GeluFwd(x.D(), y.D(), n);
  EXPECT_TRUE(Close(y.GetR(), y.GetD(), 1e-5, 1e-6));
  ref_->GeluBwd(dy.R(), x.R(), dy.R(), n);  // dx aliases dy
  dev_->GeluBwd(dy.D(), x.D(), dy.D(), n);
  EXPECT_TRUE(Close(dy.GetR(), dy.GetD(), 1e-5, 1e-6));
}

TEST_F(CudaVsCpu, AdamW) {
  const size_t n = 10007;
  Twin<float> p(ref_.get(), dev_.get(), RandomVec(n, 13));
  Twin<float> g(ref_.get(), dev_.get(), RandomVec(n, 14, -3.0f, 3.0f));
  Twin<float> m(ref_.get(), dev_.get(), RandomVec(n, 15, -0.1f, 0.1f));
  Twin<float> v(ref_.get(), dev_.get(), RandomVec(n, 16, 0.0f, 0.01f));
  AdamParams hp;
  hp.lr = 3e-3f;
  hp.weight_decay = 0.1f;
  hp.grad_scale = 0.5f;
  for (int64_t step = 1; step <= 3; ++step) {
    hp.step = step;
    ref_->AdamStep(p.R(), g.R(), m.R(), v.R(), n, hp);
    dev_->AdamStep(p.D(), g.D(), m.D(), v.D(), n, hp);
  }
  EXPECT_TRUE(Close(m.GetR(), m.GetD(), 1e-6, 1e-9));
  EXPECT_TRUE(Close(v.GetR(), v.GetD(), 1e-6, 1e-12));
  EXPECT_TRUE(Close(p.GetR(), p.GetD(), 1e-6, 1e-7));
}

std::vector<float> CastInputs() {
  std::vector<float> v = RandomVec(4099, 17, -1e4f, 1e4f);
  auto bits = [](uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; };
  const float specials[] = {0.0f, -0.0f, 1.0f, -1.0f, std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(),
                            bits(0x7f800001u), bits(0xffc12345u),  // signalling / negative NaN payloads
                            bits(0x3f808000u), bits(0x3f818000u),  // bf16 ties: to even
                            bits(0x3f80ffffu), bits(0x7f7fffffu),  // max float rounds to inf in bf16
                            bits(0x00000001u), bits(0x807fffffu),  // denormals
                            65504.0f, 65520.0f, 1e-8f, 6.1e-5f, 5.96e-8f};
  v.insert(v.end(), std::begin(specials), std::end(specials));
  return v;
}

TEST_F(CudaVsCpu, CastBF16BitExact) {
  const std::vector<float> in = CastInputs();
  const size_t n = in.size();
  Twin<float> x(ref_.get(), dev_.get(), in);
  Twin<uint16_t> h(ref_.get(), dev_.get(), std::vector<uint16_t>(n, 0));
  Twin<float> back(ref_.get(), dev_.get(), std::vector<float>(n, 0.0f));
  ref_->CastF32ToBF16(x.R(), h.R(), n);
  dev_->CastF32ToBF16(x.D(), h.D(), n);
  const auto hr = h.GetR(), hd = h.GetD();
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(hr[i], hd[i]) << "f32->bf16 at " << i << " x=" << in[i];
  ref_->CastBF16ToF32(h.R(), back.R(), n);
  dev_->CastBF16ToF32(h.D(), back.D(), n);
  const auto br = back.GetR(), bd = back.GetD();
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(std::memcmp(&br[i], &bd[i], 4), 0) << "bf16->f32 at " << i;
}

uint16_t RefF16(float f) {
  const _Float16 h = static_cast<_Float16>(f);  // GCC: IEEE round-to-nearest-even
  uint16_t b;
  std::memcpy(&b, &h, 2);
  return b;
}

TEST_F(CudaVsCpu, CastF16) {
  CudaBackend* cu = AsCuda(dev_.get());
  if (cu == nullptr) GTEST_SKIP() << "fp16 casts are CUDA-only";
  const std::vector<float> in = CastInputs();
  const size_t n = in.size();
  DeviceBuffer x = cudatest::Upload(dev_.get(), in);
  DeviceBuffer h = cudatest::Upload(dev_.get(), std::vector<uint16_t>(n, 0));
  DeviceBuffer back = cudatest::Upload(dev_.get(), std::vector<float>(n, 0.0f));
  cu->CastF32ToF16(x.as<float>(), h.as<uint16_t>(), n);
  cu->CastF16ToF32(h.as<uint16_t>(), back.as<float>(), n);
  const auto hd = cudatest::Download<uint16_t>(dev_.get(), h.data(), n);
  const auto bd = cudatest::Download<float>(dev_.get(), back.data(), n);
  for (size_t i = 0; i < n; ++i) {
    const uint16_t want = RefF16(in[i]);
    if (std::isnan(in[i])) {
      ASSERT_TRUE((hd[i] & 0x7c00u) == 0x7c00u && (hd[i] & 0x03ffu) != 0) << "NaN at " << i;
      ASSERT_TRUE(std::isnan(bd[i]));
      continue;
    }
    ASSERT_EQ(hd[i], want) << "f32->f16 at " << i << " x=" << in[i];
    _Float16 hh;
    std::memcpy(&hh, &want, 2);
    ASSERT_EQ(bd[i], static_cast<float>(hh)) << "f16->f32 at " << i;
  }
}

TEST_F(CudaVsCpu, CheckNonFinite) {
  CudaBackend* cu = AsCuda(dev_.get());
  if (cu == nullptr) GTEST_SKIP() << "CheckNonFinite is CUDA-only";
  std::vector<float> v = RandomVec(300001, 18, -1e30f, 1e30f);
  DeviceBuffer x = cudatest::Upload(dev_.get(), v);
  DeviceBuffer flag = cudatest::Upload(dev_.get(), std::vector<int32_t>{0});
  cu->CheckNonFinite(x.as<float>(), v.size(), flag.as<int32_t>());
  EXPECT_EQ(cudatest::Download<int32_t>(dev_.get(), flag.data(), 1)[0], 0);
  for (float bad : {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                    std::numeric_limits<float>::quiet_NaN()}) {
    std::vector<float> w = v;
    w[299999] = bad;
    DeviceBuffer xb = cudatest::Upload(dev_.get(), w);
    ASSERT_TRUE(dev_->Memset(flag.data(), 0, 4).ok());
    cu->CheckNonFinite(xb.as<float>(), w.size(), flag.as<int32_t>());
    EXPECT_EQ(cudatest::Download<int32_t>(dev_.get(), flag.data(), 1)[0], 1) << bad;
  }
}

}  // namespace
}  // namespace zinf
