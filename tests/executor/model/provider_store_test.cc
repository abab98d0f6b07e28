// ResidentParamProvider bookkeeping and the activation stores.
#include <gtest/gtest.h>

#include "tests/executor/model/model_test_util.h"

namespace zinf {
namespace {

TEST(ResidentParamProvider, LayoutAndProtocolChecks) {
  auto be = testing::ModelBackend();
  auto model = std::move(Gpt::Create(testing::TinyConfig(), be.get(), nullptr, 0)).value();
  auto p = testing::MakeProvider(be.get(), *model);
  for (size_t g = 0; g < model->groups().size(); ++g) {
    EXPECT_EQ(p->offset(static_cast<int>(g)) % 64, 0u);  // 256-byte aligned groups
    if (g + 1 < model->groups().size()) {
      EXPECT_GE(p->offset(static_cast<int>(g) + 1) - p->offset(static_cast<int>(g)),
                model->groups()[g].numel);
    }
  }
  EXPECT_EQ(p->Release(0).code(), Code::kInternal);  // not acquired
  EXPECT_EQ(p->ReleaseGrad(1).code(), Code::kInternal);
  EXPECT_EQ(p->Acquire(999).status().code(), Code::kInvalidArgument);
  ASSERT_TRUE(p->Acquire(2).ok());
  EXPECT_FALSE(p->AllReleased());
  EXPECT_TRUE(p->Release(2).ok());
  EXPECT_TRUE(p->AllReleased());
  std::vector<float> flat(3);
  EXPECT_EQ(p->UploadParams(flat).code(), Code::kInvalidArgument);
}

TEST(ActivationStores, RoundTripAndAccounting) {
  auto be = testing::ModelBackend();
  DeviceActivationStore dev(be.get());
  HostActivationStore host(be.get());
  auto src = std::move(be->AllocBuffer(1024 * 4)).value();
  auto dst = std::move(be->AllocBuffer(1024 * 4)).value();
  for (int i = 0; i < 1024; ++i) src.as<float>()[i] = 0.5f * i;
  for (ActivationStore* s : {static_cast<ActivationStore*>(&dev),
                             static_cast<ActivationStore*>(&host)}) {
    EXPECT_EQ(s->Load(3, dst.as<float>()).code(), Code::kNotFound);
    ASSERT_TRUE(s->Save(3, src.as<float>(), 1024 * 4).ok());
    ASSERT_TRUE(s->Save(5, src.as<float>(), 512 * 4).ok());
    ASSERT_TRUE(s->Load(3, dst.as<float>()).ok());
    EXPECT_EQ(dst.as<float>()[1023], 0.5f * 1023);
  }
  EXPECT_EQ(dev.device_bytes(), 1536u * 4);
  EXPECT_EQ(dev.host_bytes(), 0u);
  EXPECT_EQ(host.host_bytes(), 1536u * 4);
  EXPECT_EQ(host.device_bytes(), 0u);
  // Re-saving the same size reuses the device slot (no new arena allocation).
  const size_t live = be->Stats().live_allocations;
  ASSERT_TRUE(dev.Save(3, src.as<float>(), 1024 * 4).ok());
  EXPECT_EQ(be->Stats().live_allocations, live);
}

}  // namespace
}  // namespace zinf
