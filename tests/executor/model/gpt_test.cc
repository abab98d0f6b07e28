// Provider protocol, schedule conformance, memory behaviour and errors.
#include "executor/model/gpt.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tests/executor/model/model_test_util.h"

namespace zinf {
namespace {

TEST(Gpt, CallsProviderInScheduleOrder) {
  auto be = testing::ModelBackend();
  DeviceActivationStore store(be.get());
  GptConfig c = testing::TinyConfig(3, 2);
  auto model = std::move(Gpt::Create(c, be.get(), &store, 2)).value();
  auto inner = testing::MakeProvider(be.get(), *model);
  testing::RecordingProvider rec(inner.get());
  auto batch = testing::RandomBatch(c, 2, 1);
  auto loss = model->ForwardBackward(rec, batch.tokens.data(), batch.targets.data(), 2);
  ASSERT_TRUE(loss.ok()) << loss.status().ToString();
  const auto& sched = model->StepSchedule();
  ASSERT_EQ(rec.ops.size(), sched.size());
  std::vector<int> want_acq, want_grad;
  for (size_t i = 0; i < sched.size(); ++i) {
    EXPECT_EQ(rec.ops[i], static_cast<int>(i));
    want_acq.push_back(sched[i].group);
    if (sched[i].grad) want_grad.push_back(sched[i].group);
  }
  EXPECT_EQ(rec.acquires, want_acq);
  EXPECT_EQ(rec.grad_acquires, want_grad);
  EXPECT_TRUE(inner->AllReleased());
  // Every acquire is released before the next acquire (one group live at a time).
  for (size_t i = 0; i + 1 < rec.log.size(); ++i) {
    if (rec.log[i][0] == 'A' && rec.log[i][1] != 'G' && rec.log[i + 1][0] == 'A') {
      EXPECT_EQ(rec.log[i + 1][1], 'G') << i;  // only its own AcquireGrad may follow
    }
  }
  // Forward only: the forward prefix.
  testing::RecordingProvider rec2(inner.get());
  ASSERT_TRUE(model->Forward(rec2, batch.tokens.data(), batch.targets.data(), 2).ok());
  EXPECT_EQ(rec2.acquires, model->ForwardOrder());
  EXPECT_TRUE(rec2.grad_acquires.empty());
  EXPECT_FALSE(model->RecomputeOrder().empty());
}

TEST(Gpt, InitialLossIsNearLogVocab) {
  auto be = testing::ModelBackend();
  GptConfig c = testing::TinyConfig();
  auto model = std::move(Gpt::Create(c, be.get(), nullptr, 0)).value();
  auto p = testing::MakeProvider(be.get(), *model);
  auto batch = testing::RandomBatch(c, 3, 2);
  auto loss = model->Forward(*p, batch.tokens.data(), batch.targets.data(), 3);
  ASSERT_TRUE(loss.ok());
  EXPECT_NEAR(*loss, std::log(32.0), 0.1);
  auto loss2 = model->ForwardBackward(*p, batch.tokens.data(), batch.targets.data(), 3);
  ASSERT_TRUE(loss2.ok());
  EXPECT_EQ(*loss, *loss2);
}

TEST(Gpt, NoArenaAllocationInsideTheStepLoop) {
  auto be = testing::ModelBackend();
  HostActivationStore store(be.get());
  GptConfig c = testing::TinyConfig(4);
  auto model = std::move(Gpt::Create(c, be.get(), &store, 1)).value();
  auto p = testing::MakeProvider(be.get(), *model);
  auto batch = testing::RandomBatch(c, 2, 3);
  ASSERT_TRUE(model->ForwardBackward(*p, batch.tokens.data(), batch.targets.data(), 2).ok());
  const ArenaStats s1 = be->Stats();
  be->ResetPeak();
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(model->ForwardBackward(*p, batch.tokens.data(), batch.targets.data(), 2).ok());
  }
  const ArenaStats s2 = be->Stats();
  EXPECT_EQ(s2.live_allocations, s1.live_allocations);
  EXPECT_EQ(s2.used_bytes, s1.used_bytes);
  EXPECT_EQ(s2.peak_bytes, s1.used_bytes);  // nothing transient either
  EXPECT_GT(model->activation_bytes(), 0u);
  EXPECT_GT(model->workspace_bytes(), 0u);
  EXPECT_EQ(store.host_bytes(), 3u * 2 * 8 * 16 * 4);  // 3 checkpoints of [N, C]
  EXPECT_EQ(store.device_bytes(), 0u);
}

TEST(Gpt, CheckpointingShrinksActivationMemory) {
  auto be = testing::ModelBackend();
  DeviceActivationStore store(be.get());
  GptConfig c = testing::TinyConfig(4);
  auto full = std::move(Gpt::Create(c, be.get(), nullptr, 0)).value();
  auto ckpt = std::move(Gpt::Create(c, be.get(), &store, 1)).value();
  ASSERT_TRUE(full->Prepare(2).ok());
  ASSERT_TRUE(ckpt->Prepare(2).ok());
  EXPECT_EQ(full->num_segments(), 1);
  EXPECT_EQ(ckpt->num_segments(), 4);
  EXPECT_LT(ckpt->activation_bytes(), full->activation_bytes() / 2);
}

TEST(Gpt, OutOfMemoryWhenTheArenaIsTooSmall) {
  auto be = testing::ModelBackend(64 << 10);
  GptConfig c = testing::TinyConfig();
  auto model = std::move(Gpt::Create(c, be.get(), nullptr, 0)).value();
  Status st = model->Prepare(64);
  EXPECT_EQ(st.code(), Code::kOutOfMemory);
  EXPECT_NE(st.message().find("capacity 65536"), std::string::npos) << st.message();
  EXPECT_EQ(be->Used(), 0u);
}

TEST(Gpt, RejectsBadInput) {
  auto be = testing::ModelBackend();
  GptConfig c = testing::TinyConfig();
  EXPECT_FALSE(Gpt::Create(c, be.get(), nullptr, 1).ok());  // ckpt without a store
  GptConfig bad = c;
  bad.n_head = 3;
  EXPECT_EQ(Gpt::Create(bad, be.get(), nullptr, 0).status().code(), Code::kInvalidArgument);
  auto model = std::move(Gpt::Create(c, be.get(), nullptr, 0)).value();
  auto p = testing::MakeProvider(be.get(), *model);
  auto batch = testing::RandomBatch(c, 1, 4);
  batch.tokens[3] = 32;
  auto r = model->Forward(*p, batch.tokens.data(), batch.targets.data(), 1);
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace zinf
