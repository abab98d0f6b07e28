// LayerNorm, attention, embedding and cross-entropy kernels of the device backend against
// the CPU reference on the same random inputs (fp32, ~1e-5 relative).
#include <gtest/gtest.h>

#include <cmath>

#include "tests/executor/cuda/cuda_test_util.h"

namespace zinf {
namespace {

using cudatest::Close;
using cudatest::RandomTokens;
using cudatest::RandomVec;
using cudatest::Twin;

class NnVsCpu : public ::testing::Test {
 protected:
  void SetUp() override {
    ref_ = cudatest::CpuReference();
    dev_ = cudatest::DeviceBackend();
    ASSERT_NE(dev_, nullptr);
  }
  template <typename T>
  Twin<T> Make(const std::vector<T>& v) { return Twin<T>(ref_.get(), dev_.get(), v); }
  std::unique_ptr<Backend> ref_, dev_;
};

class LayerNormVsCpu : public NnVsCpu, public ::testing::WithParamInterface<std::pair<int, int>> {};

TEST_P(LayerNormVsCpu, FwdBwd) {
  const auto [rows, cols] = GetParam();
  const size_t n = static_cast<size_t>(rows) * cols;
  auto xv = RandomVec(n, 21, -2.0f, 3.0f);
  for (size_t i = 0; i < n; i += 7) xv[i] += 10.0f;  // non-zero mean
  auto x = Make(xv);
  auto gamma = Make(RandomVec(cols, 22, 0.5f, 1.5f)), beta = Make(RandomVec(cols, 23));
  auto y = Make(std::vector<float>(n, 0.0f));
  auto mean = Make(std::vector<float>(rows, 0.0f)), rstd = Make(std::vector<float>(rows, 0.0f));
  ref_->LayerNormFwd(x.R(), gamma.R(), beta.R(), y.R(), mean.R(), rstd.R(), rows, cols, 1e-5f);
  dev_->LayerNormFwd(x.D(), gamma.D(), beta.D(), y.D(), mean.D(), rstd.D(), rows, cols, 1e-5f);
  EXPECT_TRUE(Close(y.GetR(), y.GetD(), 1e-5, 1e-5));
  EXPECT_TRUE(Close(mean.GetR(), mean.GetD(), 1e-5, 1e-6));
  EXPECT_TRUE(Close(rstd.GetR(), rstd.GetD(), 1e-5, 1e-6));
  // Backward accumulates into dx, dgamma, dbeta (start from non-zero values).
  auto dy = Make(RandomVec(n, 24));
  auto dx = Make(RandomVec(n, 25)), dg = Make(RandomVec(cols, 26)), db = Make(RandomVec(cols, 27));
  ref_->LayerNormBwd(dy.R(), x.R(), gamma.R(), mean.R(), rstd.R(), dx.R(), dg.R(), db.R(), rows, cols);
  dev_->LayerNormBwd(dy.D(), x.D(), gamma.D(), mean.D(), rstd.D(), dx.D(), dg.D(), db.D(), rows, cols);
  EXPECT_TRUE(Close(dx.GetR(), dx.GetD(), 1e-4, 1e-5));
  const double acc = 1e-5 * std::sqrt(static_cast<double>(rows));
  EXPECT_TRUE(Close(dg.GetR(), dg.GetD(), 1e-5, acc));
  EXPECT_TRUE(Close(db.GetR(), db.GetD(), 1e-5, acc));
}

INSTANTIATE_TEST_SUITE_P(Shapes, LayerNormVsCpu,
                         ::testing::Values(std::make_pair(1, 8), std::make_pair(13, 100),
                                           std::make_pair(64, 768), std::make_pair(5, 3001)));

struct AttnCase {
  int B, T, C, H;
};

class AttentionVsCpu : public NnVsCpu, public ::testing::WithParamInterface<AttnCase> {};

TEST_P(AttentionVsCpu, FwdBwd) {
  const AttnCase p = GetParam();
  const size_t nqkv = static_cast<size_t>(p.B) * p.T * 3 * p.C;
  const size_t nout = static_cast<size_t>(p.B) * p.T * p.C;
  const size_t nprob = static_cast<size_t>(p.B) * p.H * p.T * p.T;
  auto qkv = Make(RandomVec(nqkv, 31, -2.0f, 2.0f));
  auto out = Make(std::vector<float>(nout, 0.0f));
  auto probs = Make(std::vector<float>(nprob, 0.0f));
  ref_->AttentionFwd(qkv.R(), out.R(), probs.R(), p.B, p.T, p.C, p.H);
  dev_->AttentionFwd(qkv.D(), out.D(), probs.D(), p.B, p.T, p.C, p.H);
  EXPECT_TRUE(Close(out.GetR(), out.GetD(), 1e-4, 1e-5));
  std::vector<bool> causal(nprob, false);  // only j <= i is defined
  for (size_t bh = 0; bh < static_cast<size_t>(p.B) * p.H; ++bh)
    for (int i = 0; i < p.T; ++i)
      for (int j = 0; j <= i; ++j) causal[(bh * p.T + i) * p.T + j] = true;
  EXPECT_TRUE(Close(probs.GetR(), probs.GetD(), 1e-4, 1e-6, &causal));
  // Backward: dqkv is overwritten (start from garbage).
  auto dout = Make(RandomVec(nout, 32));
  auto dqkv = Make(RandomVec(nqkv, 33, 100.0f, 200.0f));
  DeviceBuffer ws_r = std::move(ref_->AllocBuffer(ref_->AttentionWorkspaceBytes(p.B, p.T, p.C, p.H))).value();
  auto ws_d_r = dev_->AllocBuffer(dev_->AttentionWorkspaceBytes(p.B, p.T, p.C, p.H));
  ASSERT_TRUE(ws_d_r.ok()) << ws_d_r.status().ToString();
  DeviceBuffer ws_d = std::move(ws_d_r).value();
  ref_->AttentionBwd(dout.R(), qkv.R(), probs.R(), dqkv.R(), ws_r.as<float>(), p.B, p.T, p.C, p.H);
  dev_->AttentionBwd(dout.D(), qkv.D(), probs.D(), dqkv.D(), ws_d.as<float>(), p.B, p.T, p.C, p.H);
  EXPECT_TRUE(Close(dqkv.GetR(), dqkv.GetD(), 1e-4, 1e-5));
}

INSTANTIATE_TEST_SUITE_P(Shapes, AttentionVsCpu,
                         ::testing::Values(AttnCase{1, 1, 8, 2}, AttnCase{2, 37, 48, 4},
                                           AttnCase{1, 130, 64, 2}, AttnCase{2, 300, 96, 3},
                                           AttnCase{1, 64, 768, 12}));

TEST_F(NnVsCpu, Embedding) {
  const int B = 3, T = 17, C = 129, V = 11;  // few tokens: many repeats for the atomics
  auto tok = Make(RandomTokens(static_cast<size_t>(B) * T, V, 41));
  auto wte = Make(RandomVec(static_cast<size_t>(V) * C, 42)), wpe = Make(RandomVec(static_cast<size_t>(T) * C, 43));
  auto out = Make(std::vector<float>(static_cast<size_t>(B) * T * C, 0.0f));
  ref_->EmbeddingFwd(tok.R(), wte.R(), wpe.R(), out.R(), B, T, C);
  dev_->EmbeddingFwd(tok.D(), wte.D(), wpe.D(), out.D(), B, T, C);
  EXPECT_TRUE(Close(out.GetR(), out.GetD(), 0, 0));
  auto dout = Make(RandomVec(static_cast<size_t>(B) * T * C, 44));
  auto dwte = Make(RandomVec(static_cast<size_t>(V) * C, 45)), dwpe = Make(RandomVec(static_cast<size_t>(T) * C, 46));
  ref_->EmbeddingBwd(dout.R(), tok.R(), dwte.R(), dwpe.R(), B, T, C);
  dev_->EmbeddingBwd(dout.D(), tok.D(), dwte.D(), dwpe.D(), B, T, C);
  EXPECT_TRUE(Close(dwte.GetR(), dwte.GetD(), 1e-5, 1e-5));  // atomics: any order
  EXPECT_TRUE(Close(dwpe.GetR(), dwpe.GetD(), 1e-5, 1e-6));
}

class CrossEntropyVsCpu : public NnVsCpu, public ::testing::WithParamInterface<std::pair<int, int>> {};

TEST_P(CrossEntropyVsCpu, FwdBwd) {
  const auto [N, V] = GetParam();
  const size_t n = static_cast<size_t>(N) * V;
  auto logits = Make(RandomVec(n, 51, -8.0f, 8.0f));
  auto tgt = Make(RandomTokens(N, V, 52));
  auto row = Make(std::vector<float>(N, 0.0f)), mean = Make(std::vector<float>{0.0f});
  ref_->CrossEntropyFwd(logits.R(), tgt.R(), row.R(), mean.R(), N, V);
  dev_->CrossEntropyFwd(logits.D(), tgt.D(), row.D(), mean.D(), N, V);
  EXPECT_TRUE(Close(row.GetR(), row.GetD(), 1e-5, 1e-5));
  EXPECT_TRUE(Close(mean.GetR(), mean.GetD(), 1e-5, 1e-5));
  auto dl = Make(std::vector<float>(n, 0.0f));
  ref_->CrossEntropyBwd(logits.R(), tgt.R(), dl.R(), 0.7f, N, V);
  dev_->CrossEntropyBwd(logits.D(), tgt.D(), dl.D(), 0.7f, N, V);
  EXPECT_TRUE(Close(dl.GetR(), dl.GetD(), 1e-4, 1e-7));
  // In place (dlogits aliases logits).
  ref_->CrossEntropyBwd(logits.R(), tgt.R(), logits.R(), 1.3f, N, V);
  dev_->CrossEntropyBwd(logits.D(), tgt.D(), logits.D(), 1.3f, N, V);
  EXPECT_TRUE(Close(logits.GetR(), logits.GetD(), 1e-4, 1e-7));
}

INSTANTIATE_TEST_SUITE_P(Shapes, CrossEntropyVsCpu,
                         ::testing::Values(std::make_pair(1, 2), std::make_pair(17, 300),
                                           std::make_pair(64, 5003), std::make_pair(8, 50257)));

}  // namespace
}  // namespace zinf
