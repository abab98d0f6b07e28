// The tiny GPT learns a repeated pattern with Adam on the backend.
#include <gtest/gtest.h>

#include "tests/executor/model/model_test_util.h"

namespace zinf {
namespace {

TEST(GptTrain, LossDecreasesWithAdam) {
  auto be = testing::ModelBackend();
  GptConfig c = testing::TinyConfig(2, 2);
  DeviceActivationStore store(be.get());
  auto model = std::move(Gpt::Create(c, be.get(), &store, 1)).value();
  auto p = testing::MakeProvider(be.get(), *model, 3);
  auto m = std::move(be->AllocBuffer(p->numel() * 4)).value();
  auto v = std::move(be->AllocBuffer(p->numel() * 4)).value();
  ASSERT_TRUE(be->Memset(m.data(), 0, m.bytes()).ok());
  ASSERT_TRUE(be->Memset(v.data(), 0, v.bytes()).ok());
  // Period-5 pattern, every sequence at a different phase.
  const int B = 4;
  std::vector<int32_t> tokens, targets;
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < c.seq_len; ++t) {
      tokens.push_back((3 * ((b + t) % 5)) % c.vocab);
      targets.push_back((3 * ((b + t + 1) % 5)) % c.vocab);
    }
  AdamParams hp;
  hp.lr = 1e-2f;
  hp.weight_decay = 0.01f;
  std::vector<float> losses;
  for (int step = 1; step <= 50; ++step) {
    ASSERT_TRUE(p->ZeroGrads().ok());
    auto loss = model->ForwardBackward(*p, tokens.data(), targets.data(), B);
    ASSERT_TRUE(loss.ok()) << loss.status().ToString();
    losses.push_back(*loss);
    hp.step = step;
    be->AdamStep(p->params(), p->grads(), m.as<float>(), v.as<float>(), p->numel(), hp);
  }
  EXPECT_GT(losses.front(), 3.0f);
  EXPECT_LT(losses.back(), 0.5f) << "first " << losses.front();
  EXPECT_LT(losses.back(), losses[25]);
}

}  // namespace
}  // namespace zinf
