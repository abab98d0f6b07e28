// Checkpointing (device / host store, any interval) is bitwise identical to no
// checkpointing; tiling equals the untiled model up to float associativity.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "tests/executor/model/model_test_util.h"

namespace zinf {
namespace {

struct StepResult {
  std::vector<float> losses;
  std::vector<float> grads;  // flat provider layout
  std::map<std::string, std::vector<float>> logical_grads;
};

enum class StoreKind { kNone, kDevice, kHost };

StepResult RunSteps(GptConfig c, int ckpt, StoreKind kind, int steps = 2) {
  auto be = testing::ModelBackend();
  DeviceActivationStore dstore(be.get());
  HostActivationStore hstore(be.get());
  ActivationStore* store = kind == StoreKind::kDevice ? static_cast<ActivationStore*>(&dstore)
                           : kind == StoreKind::kHost ? static_cast<ActivationStore*>(&hstore)
                                                      : nullptr;
  auto model = std::move(Gpt::Create(c, be.get(), store, ckpt)).value();
  auto p = testing::MakeProvider(be.get(), *model, 42);
  StepResult r;
  for (int s = 0; s < steps; ++s) {  // grads accumulate over the steps
    auto batch = testing::RandomBatch(c, 3, 100 + s);
    auto loss = model->ForwardBackward(*p, batch.tokens.data(), batch.targets.data(), 3);
    EXPECT_TRUE(loss.ok()) << loss.status().ToString();
    r.losses.push_back(*loss);
  }
  EXPECT_TRUE(p->DownloadGrads(&r.grads).ok());
  r.logical_grads = testing::Logical(*p, r.grads);
  return r;
}

bool BitwiseEqual(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * 4) == 0;
}

TEST(GptCheckpointing, BitwiseIdenticalForEveryIntervalAndStore) {
  GptConfig c = testing::TinyConfig(4);
  const StepResult ref = RunSteps(c, 0, StoreKind::kNone);
  for (int ci : {1, 2, 3}) {
    for (StoreKind k : {StoreKind::kDevice, StoreKind::kHost}) {
      const StepResult r = RunSteps(c, ci, k);
      EXPECT_TRUE(BitwiseEqual(r.losses, ref.losses)) << "ci=" << ci;
      EXPECT_TRUE(BitwiseEqual(r.grads, ref.grads)) << "ci=" << ci;
    }
  }
}

TEST(GptCheckpointing, BitwiseIdenticalWithTiling) {
  GptConfig c = testing::TinyConfig(3, 2);
  const StepResult ref = RunSteps(c, 0, StoreKind::kNone);
  const StepResult r = RunSteps(c, 1, StoreKind::kHost);
  EXPECT_TRUE(BitwiseEqual(r.losses, ref.losses));
  EXPECT_TRUE(BitwiseEqual(r.grads, ref.grads));
}

TEST(GptTiling, MatchesUntiledModel) {
  const StepResult ref = RunSteps(testing::TinyConfig(2, 1), 0, StoreKind::kNone);
  for (int t : {2, 4, 8}) {
    const StepResult r = RunSteps(testing::TinyConfig(2, t), 0, StoreKind::kNone);
    for (size_t i = 0; i < ref.losses.size(); ++i) {
      EXPECT_NEAR(r.losses[i], ref.losses[i], 1e-5 * std::abs(ref.losses[i])) << "t=" << t;
    }
    ASSERT_EQ(r.logical_grads.size(), ref.logical_grads.size());
    for (const auto& [name, g] : ref.logical_grads) {
      const std::vector<float>& gt = r.logical_grads.at(name);
      ASSERT_EQ(gt.size(), g.size()) << name;
      float scale = 0.0f;
      for (float x : g) scale = std::max(scale, std::abs(x));
      for (size_t i = 0; i < g.size(); ++i) {
        ASSERT_NEAR(gt[i], g[i], 1e-5f * scale + 1e-9f) << name << "[" << i << "] t=" << t;
      }
    }
  }
}

}  // namespace
}  // namespace zinf
