#include "executor/optim/loss_scaler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace zinf {
namespace {

LossScalerOptions Opts() {
  LossScalerOptions o;
  o.init_scale = 1024.0f;
  o.growth_interval = 3;
  o.min_scale = 4.0f;
  o.max_scale = 4096.0f;
  return o;
}

TEST(LossScaler, GrowsAfterIntervalOfGoodSteps) {
  DynamicLossScaler s(Opts());
  EXPECT_EQ(s.scale(), 1024.0f);
  EXPECT_TRUE(s.Update(false));
  EXPECT_TRUE(s.Update(false));
  EXPECT_EQ(s.scale(), 1024.0f);
  EXPECT_TRUE(s.Update(false));
  EXPECT_EQ(s.scale(), 2048.0f);
  EXPECT_EQ(s.good_steps(), 0);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(s.Update(false));
  EXPECT_EQ(s.scale(), 4096.0f);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(s.Update(false));
  EXPECT_EQ(s.scale(), 4096.0f) << "clamped at max_scale";
  EXPECT_EQ(s.skipped_steps(), 0);
  EXPECT_FLOAT_EQ(s.inv_scale(), 1.0f / 4096.0f);
}

TEST(LossScaler, BacksOffAndSkipsOnOverflow) {
  DynamicLossScaler s(Opts());
  EXPECT_TRUE(s.Update(false));
  EXPECT_TRUE(s.Update(false));
  EXPECT_FALSE(s.Update(true));
  EXPECT_TRUE(s.skipped());
  EXPECT_EQ(s.scale(), 512.0f);
  EXPECT_EQ(s.good_steps(), 0) << "an overflow resets the growth counter";
  EXPECT_TRUE(s.Update(false));
  EXPECT_FALSE(s.skipped());
  EXPECT_TRUE(s.Update(false));
  EXPECT_EQ(s.scale(), 512.0f);
  EXPECT_TRUE(s.Update(false));
  EXPECT_EQ(s.scale(), 1024.0f);
  for (int i = 0; i < 20; ++i) EXPECT_FALSE(s.Update(true));
  EXPECT_EQ(s.scale(), 4.0f) << "clamped at min_scale";
  EXPECT_EQ(s.skipped_steps(), 21);
  EXPECT_EQ(s.steps(), 26);
}

TEST(LossScaler, Hysteresis) {
  LossScalerOptions o = Opts();
  o.hysteresis = 2;
  DynamicLossScaler s(o);
  EXPECT_FALSE(s.Update(true));
  EXPECT_EQ(s.scale(), 1024.0f);
  EXPECT_FALSE(s.Update(true));
  EXPECT_EQ(s.scale(), 512.0f);
  EXPECT_FALSE(s.Update(true));
  EXPECT_TRUE(s.Update(false));  // a good step resets the overflow run
  EXPECT_FALSE(s.Update(true));
  EXPECT_EQ(s.scale(), 512.0f);
}

TEST(LossScaler, StaticScaleStillSkips) {
  LossScalerOptions o = Opts();
  o.dynamic = false;
  o.init_scale = 128.0f;
  DynamicLossScaler s(o);
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(s.Update(false));
  EXPECT_FALSE(s.Update(true));
  EXPECT_EQ(s.scale(), 128.0f);
  EXPECT_EQ(s.skipped_steps(), 1);
}

TEST(LossScaler, HasNonFinite) {
  std::vector<float> v(1000, 1.0f);
  EXPECT_FALSE(DynamicLossScaler::HasNonFinite(v.data(), v.size()));
  v[777] = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(DynamicLossScaler::HasNonFinite(v.data(), v.size()));
  v[777] = -std::numeric_limits<float>::infinity();
  EXPECT_TRUE(DynamicLossScaler::HasNonFinite(v.data(), v.size()));
  v[777] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(DynamicLossScaler::HasNonFinite(v.data(), v.size()));
  EXPECT_FALSE(DynamicLossScaler::HasNonFinite(v.data(), 777));
  volatile float big = std::numeric_limits<float>::max();
  v[0] = big * 2.0f;  // overflows to inf
  EXPECT_TRUE(DynamicLossScaler::HasNonFinite(v.data(), 1));
}

TEST(LossScaler, Validate) {
  EXPECT_TRUE(DynamicLossScaler::Validate(Opts()).ok());
  LossScalerOptions o = Opts();
  o.growth_factor = 1.0f;
  EXPECT_EQ(DynamicLossScaler::Validate(o).code(), Code::kInvalidArgument);
  o = Opts();
  o.backoff_factor = 1.5f;
  EXPECT_NE(DynamicLossScaler::Validate(o).message().find("backoff_factor"), std::string::npos);
  o = Opts();
  o.growth_interval = 0;
  EXPECT_FALSE(DynamicLossScaler::Validate(o).ok());
  o = Opts();
  o.min_scale = 8192.0f;
  EXPECT_FALSE(DynamicLossScaler::Validate(o).ok());
  o = Opts();
  o.init_scale = std::numeric_limits<float>::infinity();
  EXPECT_FALSE(DynamicLossScaler::Validate(o).ok());
}

}  // namespace
}  // namespace zinf
