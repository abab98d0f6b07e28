// The compute-speed check: the plan's linears, costed at the profile's rates, timed on the
// CPU backend's GEMM.
#include "executor/backend/speed_check.h"

#include <gtest/gtest.h>

#include "executor/backend/cpu/cpu_backend.h"

namespace zinf {
namespace {

Plan SmallPlan() {
  Plan p;
  p.model.name = "speed-check";
  p.model.family = "gpt";
  p.model.n_layer = 2;
  p.model.hidden = 64;
  p.model.n_head = 4;
  p.model.n_kv_head = 2;
  p.model.ffn_hidden = 256;
  p.model.vocab = 256;
  p.model.seq_len = 32;
  p.knobs.seq_len = 32;
  p.knobs.micro_batch = 2;
  p.backend = "cpu";
  return p;
}

HwProfile CpuProfile(double flops) {
  HwProfile hw;
  hw.backend = "cpu";
  hw.achievable_flops = flops;
  hw.gemm_curve = {{1e3, flops}, {1e12, flops}};
  return hw;
}

TEST(SpeedCheck, CostsThePlansLinearsAtTheProfilesRates) {
  Plan p = SmallPlan();
  const HwProfile hw = CpuProfile(1e9);
  std::vector<SpeedCheck::Linear> l = SpeedCheck::PlanLinears(p, hw);
  ASSERT_EQ(l.size(), 4u);
  // qkv: hidden -> hidden + 2 kv heads of 16; proj; fc; the MLP's projection back.
  EXPECT_EQ(l[0].m, 64);
  EXPECT_EQ(l[0].k, 64);
  EXPECT_EQ(l[0].n, 64 + 2 * 32);
  EXPECT_EQ(l[1].n, 64);
  EXPECT_EQ(l[2].n, 256);
  EXPECT_EQ(l[3].k, 256);
  EXPECT_EQ(l[3].n, 64);
  // Forward at the curve's rate, backward (two GEMMs) at it too (no backward curve).
  const double flop = 2.0 * 64 * 256 * 64;
  EXPECT_NEAR(l[3].expected_s, 3 * flop / 1e9, 1e-15);
  // Tiled: each tile's GEMM has 1/t of the outputs.
  p.knobs.tile_factor = 2;
  EXPECT_EQ(SpeedCheck::PlanLinears(p, hw)[2].n, 128);
  p.model.mlp = "swiglu";
  EXPECT_EQ(SpeedCheck::PlanLinears(p, hw)[2].n, 256);  // gate and up: 2 x 256, halved
  // A big model's shapes are cut to kMaxCheckElems a matrix, costed at their own size.
  Plan big = SmallPlan();
  big.model.hidden = 8192;
  big.model.ffn_hidden = 32768;
  big.model.n_kv_head = 4;
  big.knobs.micro_batch = 16;
  big.knobs.seq_len = 2048;
  for (const SpeedCheck::Linear& b : SpeedCheck::PlanLinears(big, hw)) {
    EXPECT_LE(int64_t{b.m} * b.k, SpeedCheck::kMaxCheckElems);
    EXPECT_LE(int64_t{b.n} * b.k, SpeedCheck::kMaxCheckElems);
    EXPECT_LE(int64_t{b.m} * b.n, SpeedCheck::kMaxCheckElems);
    EXPECT_GE(b.m, 64);
    EXPECT_NEAR(b.expected_s, 3 * 2.0 * b.m * b.k * b.n / 1e9, 1e-12);
  }
}

TEST(SpeedCheck, RatioIsExpectedOverMeasured) {
  auto be = MakeCpuBackend(size_t{1} << 20, 1);
  ASSERT_TRUE(be.ok()) << be.status().ToString();
  // A profile 1000x faster than any CPU: the check must find the machine far slower than it.
  auto fast = SpeedCheck::Create(be->get(), SmallPlan(), CpuProfile(1e15));
  ASSERT_TRUE(fast.ok());
  ASSERT_NE(*fast, nullptr);
  (*fast)->Run(0.002);
  (*fast)->Run(0.002);
  const SpeedTotals& t = (*fast)->totals();
  EXPECT_EQ(t.checks, 2);
  EXPECT_GT(t.measured_s, 0.002);  // the first check at least its min_s; the second its rounds
  EXPECT_LT(t.Ratio(), 0.01);
  EXPECT_GT(t.Ratio(), 0);
  EXPECT_LE(t.min, t.Ratio());
  EXPECT_GE(t.max, t.Ratio());
  // And 1000x slower than any CPU: far faster than it.
  auto slow = SpeedCheck::Create(be->get(), SmallPlan(), CpuProfile(1e3));
  ASSERT_TRUE(slow.ok());
  (*slow)->Run(0.0);
  EXPECT_GT((*slow)->totals().Ratio(), 100);
}

// Every check is the same work: the first runs rounds of the plan's linears until its min_s
// has passed; the later ones run as many rounds, whatever their min_s, so the totals' ratio is
// the harmonic mean of the checks' speeds (the weighting of a mean step time).
TEST(SpeedCheck, EveryCheckRunsTheFirstChecksRounds) {
  auto be = MakeCpuBackend(size_t{1} << 20, 1);
  ASSERT_TRUE(be.ok()) << be.status().ToString();
  auto c = SpeedCheck::Create(be->get(), SmallPlan(), CpuProfile(1e9));
  ASSERT_TRUE(c.ok());
  ASSERT_NE(*c, nullptr);
  EXPECT_EQ((*c)->rounds(), 0);
  double round_s = 0;
  for (const SpeedCheck::Linear& l : SpeedCheck::PlanLinears(SmallPlan(), CpuProfile(1e9))) round_s += l.expected_s;
  (*c)->Run(0.005);
  const int rounds = (*c)->rounds();
  EXPECT_GE(rounds, 1);
  EXPECT_GE((*c)->totals().measured_s, 0.005);
  EXPECT_NEAR((*c)->totals().expected_s, rounds * round_s, 1e-9 * rounds * round_s);
  (*c)->Run(0.0);  // the same rounds, not one
  (*c)->Run(1.0);  // nor a second's worth
  EXPECT_EQ((*c)->rounds(), rounds);
  EXPECT_EQ((*c)->totals().checks, 3);
  EXPECT_NEAR((*c)->totals().expected_s, 3 * rounds * round_s, 3e-9 * rounds * round_s);
  EXPECT_LT((*c)->totals().measured_s, 0.9);
}

// Each check also copies SpeedCheck::kMemoryCheckBytes against the profile's host memory
// bandwidth: a profile 1000x faster than any memory finds it far slower, one 1000x slower far
// faster; without the bandwidth there is no memory check.
TEST(SpeedCheck, MemoryChecksBesideTheGemms) {
  auto be = MakeCpuBackend(size_t{1} << 20, 1);
  ASSERT_TRUE(be.ok()) << be.status().ToString();
  HwProfile fast = CpuProfile(1e12);
  fast.host_mem_bw = 1e14;
  auto f = SpeedCheck::Create(be->get(), SmallPlan(), fast);
  ASSERT_TRUE(f.ok());
  ASSERT_NE(*f, nullptr);
  (*f)->Run(0.0);
  (*f)->Run(0.0);
  const SpeedTotals& m = (*f)->memory_totals();
  EXPECT_EQ(m.checks, 2);
  EXPECT_DOUBLE_EQ(m.expected_s, 2 * 2.0 * SpeedCheck::kMemoryCheckBytes / 1e14);
  EXPECT_LT(m.Ratio(), 0.01);
  EXPECT_GT(m.Ratio(), 0);
  HwProfile slow = CpuProfile(1e12);
  slow.host_mem_bw = 1e6;
  auto s = SpeedCheck::Create(be->get(), SmallPlan(), slow);
  ASSERT_TRUE(s.ok());
  (*s)->Run(0.0);
  EXPECT_GT((*s)->memory_totals().Ratio(), 100);
  HwProfile none = CpuProfile(1e12);
  none.host_mem_bw = 0;
  auto n = SpeedCheck::Create(be->get(), SmallPlan(), none);
  ASSERT_TRUE(n.ok());
  (*n)->Run(0.0);
  EXPECT_EQ((*n)->memory_totals().checks, 0);
  EXPECT_EQ((*n)->totals().checks, 1);
}

// The copy lands whole, split over threads.
TEST(SpeedCheck, MemoryCopyPassCopiesEveryByte) {
  std::vector<char> src(1000003), dst(src.size(), 0);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<char>(i * 7 + 1);
  EXPECT_GT(SpeedCheck::MemoryCopyPass(dst.data(), src.data(), src.size(), 3), 0);
  EXPECT_EQ(src, dst);
}

TEST(SpeedCheck, NothingToCheckWithoutCpuRates) {
  auto be = MakeCpuBackend(size_t{1} << 20, 1);
  ASSERT_TRUE(be.ok());
  HwProfile gpu = CpuProfile(1e12);
  gpu.backend = "cuda";
  auto c = SpeedCheck::Create(be->get(), SmallPlan(), gpu);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(*c, nullptr);
  HwProfile none;
  none.backend = "cpu";
  auto d = SpeedCheck::Create(be->get(), SmallPlan(), none);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(*d, nullptr);
}

TEST(SpeedTotals, TimeWeighted) {
  SpeedTotals t;
  t.Add(1.0, 2.0);  // 0.5
  t.Add(3.0, 2.0);  // 1.5
  t.Add(1.0, 0.0);  // not a measurement
  EXPECT_EQ(t.checks, 2);
  EXPECT_DOUBLE_EQ(t.Ratio(), 1.0);
  EXPECT_DOUBLE_EQ(t.min, 0.5);
  EXPECT_DOUBLE_EQ(t.max, 1.5);
}

}  // namespace
}  // namespace zinf
