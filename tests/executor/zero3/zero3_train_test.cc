// ZeRO-3 training correctness on the CPU backend (ranks as threads through ThreadComm):
// R = 1, 2, 4 agree to float-reduction tolerance; placements none / host / NVMe and
// checkpoint tiers give bitwise identical losses; tiling equals no tiling; the loss falls.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <utility>
#include <variant>

#include "executor/comm/thread_comm.h"
#include "executor/train/trainer.h"
#include "reports/chrome_trace.h"
#include "tests/executor/zero3/tiny_plan.h"

namespace zinf {
namespace {

std::vector<double> Losses(const Plan& p, int steps, int threads = 1) {
  const int ranks = static_cast<int>(p.knobs.dp());
  ThreadCommGroup group(ranks);
  std::vector<std::vector<double>> losses(static_cast<size_t>(ranks));
  Status st = group.Run([&](Comm& c) -> Status {
    TrainOptions o;
    o.data_path = Corpus();
    o.threads = threads;
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

// With two threads the engine's paths differ by placement: the compute thread starts NVMe
// parameter reads itself, and an NVMe-staged optimizer runs a small group's Adam on one
// thread fewer (the MLP groups here, 128 x 512, are large enough for Adam to run in
// parallel with all of them). The losses still may not differ.
TEST(Zero3Train, PlacementsAreBitwiseIdenticalWithTwoThreads) {
  auto wide = [](Plan p) {
    p.model.hidden = 128;
    p.model.ffn_hidden = 512;
    return p;
  };
  std::vector<double> none = Losses(wide(TinyPlan("device", "device", "device", 1, 4)), 4, 2);
  ASSERT_EQ(none.size(), 4u);
  EXPECT_EQ(none, Losses(wide(TinyPlan("device", "host", "nvme", 1, 4)), 4, 2)) << "opt:nvme";
  EXPECT_EQ(none, Losses(wide(TinyPlan("nvme", "nvme", "nvme", 1, 4)), 4, 2)) << "all:nvme";
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

// The compute track of a traced step holds the kernels that use no parameter group too
// (attention, GELU, the loss), each under its phase and in the simulator's names, and the
// recomputed segment under "recompute".
TEST(Zero3Train, TraceRecordsKernelsBetweenOps) {
  Plan p = TinyPlan("host", "host", "host", 1, 4);
  p.knobs.ckpt_interval = 1;  // 2 layers: layer 0 is recomputed, layer 1 is not
  reports::ChromeTraceWriter trace;
  ThreadCommGroup group(1);
  Status st = group.Run([&](Comm& c) -> Status {
    TrainOptions o;
    o.data_path = Corpus();
    o.threads = 1;
    ZINF_ASSIGN_OR_RETURN(auto t, Trainer::Create(p, &c, o));
    t->engine().SetTrace(&trace, 0);
    ZINF_RETURN_IF_ERROR(t->Step(0).status());
    t->engine().SetTrace(nullptr, 0);
    return Status::Ok();
  });
  ASSERT_TRUE(st.ok()) << st.ToString();
  std::map<std::pair<std::string, std::string>, int> n;  // (phase, name) -> events on the compute track
  int lane_jobs = 0;
  for (const reports::TraceEvent& e : trace.Events()) {
    if (e.ph != 'X') continue;
    // Every op, kernel and lane job carries its thread's CPU in it: at least 0 and, on one
    // thread, no more than its time (the CPU clock is read inside the event's interval).
    auto cpu = e.args.find("cpu_us");
    if (e.tid != 5) {
      ASSERT_NE(cpu, e.args.end()) << e.name << " has no cpu_us";
      const double c = std::get<double>(cpu->second);
      EXPECT_GE(c, 0) << e.name;
      EXPECT_LE(c, e.dur_us + 10) << e.name;
    }
    if (e.tid == 0) {
      ++n[{e.cat, e.name}];
      EXPECT_GE(e.dur_us, 0) << e.name;
      ASSERT_NE(e.args.find("cpu_at_us"), e.args.end()) << e.name;
    } else if (e.tid >= 1 && e.tid <= 3) {
      ++lane_jobs;
    }
  }
  EXPECT_GT(lane_jobs, 0) << "params on the host: the copy lane's jobs are traced";
  for (const char* name : {"h0.attn.core", "h1.attn.core", "h0.mlp.gelu", "h1.mlp.gelu", "loss"}) {
    EXPECT_EQ((n[{"forward", name}]), 1) << name;
    EXPECT_EQ((n[{"backward", name}]), 1) << name;
  }
  EXPECT_EQ((n[{"recompute", "h0.attn.core"}]), 1);
  EXPECT_EQ((n[{"recompute", "h0.mlp.gelu"}]), 1);
  EXPECT_EQ((n[{"recompute", "h1.attn.core"}]), 0) << "the last segment is not recomputed";
  EXPECT_EQ((n[{"recompute", "loss"}]), 0);
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
