// ZeRO-3 training correctness on the CPU backend (ranks as threads through ThreadComm):
// R = 1, 2, 4 agree to float-reduction tolerance; placements none / host / NVMe and
// checkpoint tiers give bitwise identical losses; tiling equals no tiling; the loss falls.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "executor/comm/thread_comm.h"
#include "executor/train/trainer.h"
#include "tests/executor/zero3/tiny_plan.h"

namespace zinf {
namespace {

std::vector<double> Losses(const Plan& p, int steps) {
  const int ranks = static_cast<int>(p.knobs.dp());
  ThreadCommGroup group(ranks);
  std::vector<std::vector<double>> losses(static_cast<size_t>(ranks));
  Status st = group.Run([&](Comm& c) -> Status {
    TrainOptions o;
    o.data_path = Corpus();
    o.threads = 1;
    o.lr = 3e-3f;
    ZINF_ASSIGN_OR_RETURN(auto t, Trainer::Create(p, &c, o));
    for (int s = 0; s < steps; ++s) {
      ZINF_ASSIGN_OR_RETURN(StepResult r, t->Step(s));
      losses[static_cast<size_t>(c.rank())].push_back(r.loss);
    }
    return Status::Ok();
  });
  EXPECT_TRUE(st.ok()) << st.ToString();
  for (int r = 1; r < ranks; ++r) EXPECT_EQ(losses[0], losses[static_cast<size_t>(r)]) << "rank " << r;
  return losses[0];
}

TEST(Zero3Train, PlacementsAreBitwiseIdentical) {
  for (int ranks : {1, 2}) {
    const int mb = 4 / ranks;
    std::vector<double> none = Losses(TinyPlan("device", "device", "device", ranks, mb), 4);
    ASSERT_EQ(none.size(), 4u);
    EXPECT_EQ(none, Losses(TinyPlan("host", "host", "host", ranks, mb), 4)) << ranks << " ranks, host";
    EXPECT_EQ(none, Losses(TinyPlan("device", "host", "nvme", ranks, mb), 4)) << ranks << " ranks, opt:nvme";
    EXPECT_EQ(none, Losses(TinyPlan("nvme", "nvme", "nvme", ranks, mb), 4)) << ranks << " ranks, all:nvme";
  }
}

TEST(Zero3Train, RankCountsAgree) {
  std::vector<double> one = Losses(TinyPlan("device", "device", "device", 1, 4), 5);
  for (int ranks : {2, 4}) {
    std::vector<double> r = Losses(TinyPlan("device", "host", "host", ranks, 4 / ranks), 5);
    ASSERT_EQ(r.size(), one.size());
    for (size_t i = 0; i < r.size(); ++i) EXPECT_NEAR(r[i], one[i], 1e-4 * std::fabs(one[i])) << ranks << " ranks, step " << i;
  }
}

TEST(Zero3Train, TilingAndCheckpointing) {
  Plan base = TinyPlan("host", "host", "host", 2, 2);
  std::vector<double> ref = Losses(base, 4);
  Plan tiled = base;
  tiled.knobs.tile_factor = 2;
  std::vector<double> t = Losses(tiled, 4);
  for (size_t i = 0; i < ref.size(); ++i) EXPECT_NEAR(t[i], ref[i], 1e-5 * std::fabs(ref[i])) << "tiled, step " << i;
  Plan ck = base;
  ck.knobs.ckpt_interval = 1;
  ck.knobs.ckpt_tier = Tier::kDevice;
  EXPECT_EQ(Losses(ck, 4), ref) << "checkpoints on the device";
  ck.knobs.ckpt_tier = Tier::kHost;
  EXPECT_EQ(Losses(ck, 4), ref) << "checkpoints offloaded to the host";
}

TEST(Zero3Train, LossFallsOnText) {
  std::vector<double> l = Losses(TinyPlan("nvme", "host", "nvme", 2, 4), 40);
  double first = (l[0] + l[1] + l[2]) / 3, last = (l[37] + l[38] + l[39]) / 3;
  EXPECT_LT(last, first - 1.0) << "first " << first << " last " << last;
}

TEST(Zero3Train, DeviceBudgetIsEnforced) {
  Plan p = TinyPlan("device", "device", "device", 1, 4);
  p.knobs.device_budget_bytes = 1.0 * (1 << 20);  // 1 MiB cannot hold the activations
  ThreadCommGroup group(1);
  Status st = group.Run([&](Comm& c) -> Status {
    TrainOptions o;
    o.data_path = Corpus();
    ZINF_ASSIGN_OR_RETURN(auto t, Trainer::Create(p, &c, o));
    return t->Step(0).status();
  });
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), Code::kOutOfMemory) << st.ToString();
}

}  // namespace
}  // namespace zinf
