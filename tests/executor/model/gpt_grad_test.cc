// Whole-model gradient check of the tiny GPT against central finite
// differences of the fp32 loss.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "tests/executor/model/model_test_util.h"

namespace zinf {
namespace {

class GptGradCheck : public ::testing::TestWithParam<int> {};  // param: tile

TEST_P(GptGradCheck, MatchesFiniteDifferences) {
  auto be = testing::ModelBackend();
  GptConfig c = testing::TinyConfig(2, GetParam());
  DeviceActivationStore store(be.get());
  auto model = std::move(Gpt::Create(c, be.get(), &store, 1)).value();
  auto p = testing::MakeProvider(be.get(), *model, 99);
  // Larger weights than the 0.02 init give a better-conditioned check.
  std::vector<float> params;
  ASSERT_TRUE(p->DownloadParams(&params).ok());
  std::mt19937 rng(5);
  std::normal_distribution<float> nd(0.0f, 0.2f);
  for (float& x : params) x += nd(rng);
  ASSERT_TRUE(p->UploadParams(params).ok());
  auto batch = testing::RandomBatch(c, 2, 11);
  ASSERT_TRUE(p->ZeroGrads().ok());
  ASSERT_TRUE(model->ForwardBackward(*p, batch.tokens.data(), batch.targets.data(), 2).ok());
  std::vector<float> grads;
  ASSERT_TRUE(p->DownloadGrads(&grads).ok());

  float* dev = p->params();  // CPU backend: device memory is host-addressable
  auto loss = [&] {
    return double(*model->Forward(*p, batch.tokens.data(), batch.targets.data(), 2));
  };
  const float h = 1e-2f;
  // 1) Per group: the few largest-gradient entries, element by element.
  int checked = 0, bad = 0;
  for (size_t g = 0; g < model->groups().size(); ++g) {
    const size_t off = p->offset(static_cast<int>(g)), n = model->groups()[g].numel;
    std::vector<size_t> idx(n);
    std::iota(idx.begin(), idx.end(), 0);
    std::partial_sort(idx.begin(), idx.begin() + std::min<size_t>(4, n), idx.end(),
                      [&](size_t a, size_t b) { return std::abs(grads[off + a]) > std::abs(grads[off + b]); });
    for (size_t k = 0; k < std::min<size_t>(4, n); ++k) {
      const size_t i = off + idx[k];
      const float x0 = dev[i];
      dev[i] = x0 + h;
      const double lp = loss();
      dev[i] = x0 - h;
      const double lm = loss();
      dev[i] = x0;
      const double fd = (lp - lm) / (2.0 * h), an = grads[i];
      ++checked;
      if (std::abs(fd - an) > 2e-4 + 3e-2 * std::abs(an)) {
        ++bad;
        ADD_FAILURE() << model->groups()[g].name << "[" << idx[k] << "]: analytic " << an
                      << " fd " << fd;
      }
    }
  }
  EXPECT_EQ(bad, 0) << "of " << checked;
  // 2) All parameters at once along a random direction: L(p + h d) vs g . d.
  std::vector<float> d(params.size());
  for (float& x : d) x = nd(rng);
  double gd = 0;
  for (size_t i = 0; i < d.size(); ++i) gd += double(grads[i]) * d[i];
  const float hd = 1e-2f;
  for (size_t i = 0; i < d.size(); ++i) dev[i] = params[i] + hd * d[i];
  const double lp = loss();
  for (size_t i = 0; i < d.size(); ++i) dev[i] = params[i] - hd * d[i];
  const double lm = loss();
  const double fd = (lp - lm) / (2.0 * hd);
  EXPECT_NEAR(fd, gd, 1e-2 * std::abs(gd) + 1e-4) << "directional derivative";
}

INSTANTIATE_TEST_SUITE_P(Tiles, GptGradCheck, ::testing::Values(1, 2));

}  // namespace
}  // namespace zinf
