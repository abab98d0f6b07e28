// ThreadComm (R = 1..4) and LoopbackComm against serial references; timeouts,
// mismatches, the bandwidth probe.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "executor/comm/coll_probe.h"
#include "executor/comm/loopback_comm.h"
#include "executor/comm/thread_comm.h"
#include "tests/executor/comm/comm_checks.h"

namespace zinf {
namespace {

class ThreadCommRanks : public ::testing::TestWithParam<int> {};

TEST_P(ThreadCommRanks, AllCollectivesMatchSerialReference) {
  ThreadCommGroup group(GetParam(), CommOptions{60});
  Status st = group.Run([](Comm& c) { return commtest::RunAllChecks(c); });
  EXPECT_TRUE(st.ok()) << st.ToString();
}

TEST_P(ThreadCommRanks, BandwidthProbe) {
  ThreadCommGroup group(GetParam(), CommOptions{60});
  Status st = group.Run([](Comm& c) { return commtest::CheckProbe(c); });
  EXPECT_TRUE(st.ok()) << st.ToString();
}

INSTANTIATE_TEST_SUITE_P(R, ThreadCommRanks, ::testing::Values(1, 2, 3, 4),
                         [](const auto& info) { return std::string("R").append(std::to_string(info.param)); });

TEST(LoopbackComm, AllCollectivesMatchSerialReference) {
  LoopbackComm c;
  EXPECT_EQ(c.size(), 1);
  EXPECT_EQ(c.name(), "loopback");
  Status st = commtest::RunAllChecks(c);
  EXPECT_TRUE(st.ok()) << st.ToString();
  st = commtest::CheckProbe(c);
  EXPECT_TRUE(st.ok()) << st.ToString();
}

TEST(ThreadComm, MismatchedCollectivesFailOnEveryRank) {
  ThreadCommGroup group(2, CommOptions{10});
  std::vector<Status> got(2);
  Status st = group.Run([&](Comm& c) {
    std::vector<float> v(8, 1.0f);
    got[static_cast<size_t>(c.rank())] = c.AllReduce(v.data(), c.rank() == 0 ? 4 : 5);
    // Still usable afterwards: the ranks stayed in step.
    Status b = c.AllReduce(v.data(), 8);
    return b.ok() && v[0] == 2.0f ? Status::Ok() : Internal("comm unusable after mismatch: " + b.ToString());
  });
  EXPECT_TRUE(st.ok()) << st.ToString();
  for (const Status& g : got) {
    EXPECT_EQ(g.code(), Code::kInvalidArgument) << g.ToString();
    EXPECT_NE(g.message().find("mismatch"), std::string::npos) << g.ToString();
  }
}

TEST(ThreadComm, MissingRankTimesOutWithAbortedAndBreaksTheGroup) {
  ThreadCommGroup group(3, CommOptions{0.3});
  std::vector<Status> got(3);
  auto t0 = std::chrono::steady_clock::now();
  (void)group.Run([&](Comm& c) {
    if (c.rank() == 2) return Status::Ok();  // "dies": never enters the barrier
    got[static_cast<size_t>(c.rank())] = c.Barrier();
    return Status::Ok();
  });
  double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(waited, 5.0);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(got[r].code(), Code::kAborted) << got[r].ToString();
    EXPECT_NE(got[r].message().find("barrier"), std::string::npos) << got[r].ToString();
  }
  // At least the first rank to time out names the missing rank.
  EXPECT_TRUE(got[0].message().find("rank(s) 2") != std::string::npos ||
              got[1].message().find("rank(s) 2") != std::string::npos)
      << got[0].ToString() << " / " << got[1].ToString();
  // Later collectives fail at once instead of hanging.
  float x = 1;
  Status late = group.comm(2).AllReduce(&x, 1);
  EXPECT_EQ(late.code(), Code::kAborted) << late.ToString();
  EXPECT_TRUE(group.comm(0).broken());
  EXPECT_EQ(group.comm(0).Barrier().code(), Code::kAborted);
}

TEST(ThreadComm, AsyncOpsQueueInIssueOrderAndOverlapCompute) {
  ThreadCommGroup group(4, CommOptions{60});
  Status st = group.Run([](Comm& c) {
    // Many outstanding ops at once, waited out of order.
    std::vector<std::vector<float>> bufs(16, std::vector<float>(1001, static_cast<float>(c.rank() + 1)));
    std::vector<CommHandle> hs;
    for (auto& b : bufs) hs.push_back(c.AllReduceAsync(b.data(), b.size()));
    for (size_t i = hs.size(); i-- > 0;) ZINF_RETURN_IF_ERROR(hs[i].Wait());
    for (auto& b : bufs) {
      if (b[0] != 10.0f || b[1000] != 10.0f) return Internal("async allreduce wrong");
    }
    return Status::Ok();
  });
  EXPECT_TRUE(st.ok()) << st.ToString();
}

TEST(ThreadComm, ResultsAreBitwiseIdenticalAcrossRanksAndRuns) {
  constexpr size_t kCount = 12345;
  std::vector<std::vector<float>> first;
  for (int run = 0; run < 2; ++run) {
    ThreadCommGroup group(4);
    std::vector<std::vector<float>> out(4);
    ASSERT_TRUE(group.Run([&](Comm& c) {
      out[static_cast<size_t>(c.rank())] = commtest::RankData(c.rank(), kCount, 99);
      return c.AllReduce(out[static_cast<size_t>(c.rank())].data(), kCount);
    }).ok());
    for (int r = 1; r < 4; ++r) EXPECT_EQ(0, std::memcmp(out[0].data(), out[r].data(), kCount * 4));
    if (run == 0) first = out;
    else EXPECT_EQ(0, std::memcmp(first[0].data(), out[0].data(), kCount * 4));
  }
}

TEST(CollProbe, BusBandwidthFactors) {
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(CollOp::kAllGather, 4), 0.75);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(CollOp::kReduceScatter, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(CollOp::kAllReduce, 4), 1.5);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(CollOp::kBroadcast, 4), 1.0);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(CollOp::kAllReduce, 1), 0.0);
  LoopbackComm c;
  EXPECT_EQ(MeasureCollective(c, CollOp::kAllReduce, 2, 1).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(MeasureCollective(c, CollOp::kAllReduce, 1024, 0).status().code(), Code::kInvalidArgument);
}

TEST(SumInRankOrder, MatchesSerialLoopAndAllowsAliasing) {
  auto a = commtest::RankData(0, 5000, 1), b = commtest::RankData(1, 5000, 1), c = commtest::RankData(2, 5000, 1);
  const float* parts[] = {a.data(), b.data(), c.data()};
  std::vector<float> out(5000);
  SumInRankOrder(parts, 3, 5000, out.data());
  for (size_t i = 0; i < 5000; ++i) {
    float want = a[i];
    want += b[i];
    want += c[i];
    ASSERT_EQ(0, std::memcmp(&want, &out[i], 4)) << i;
  }
  SumInRankOrder(parts, 3, 5000, b.data());  // out aliases part 1
  EXPECT_EQ(0, std::memcmp(out.data(), b.data(), 5000 * 4));
}

}  // namespace
}  // namespace zinf
