// MpiComm under mpirun (suite mpi; run via tests/mpi_run.sh NP this-binary): every
// collective against the serial reference, async overlap, two comms used from two
// threads, the bandwidth probe, and a peer that does not show up (timeout -> Aborted).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "executor/comm/coll_probe.h"
#include "executor/comm/mpi_comm.h"
#include "executor/comm/mpi_session.h"
#include "tests/executor/comm/comm_checks.h"

namespace zinf {
namespace {

std::unique_ptr<MpiComm> MakeComm(double timeout_s = 120) {
  auto c = MpiComm::Create(CommOptions{timeout_s});
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? std::move(c).value() : nullptr;
}

TEST(MpiComm, AllCollectivesMatchSerialReference) {
  auto c = MakeComm();
  ASSERT_TRUE(c);
  EXPECT_EQ(c->name(), "mpi");
  Status st = commtest::RunAllChecks(*c);
  EXPECT_TRUE(st.ok()) << st.ToString();
}

TEST(MpiComm, BandwidthProbe) {
  auto c = MakeComm();
  ASSERT_TRUE(c);
  Status st = commtest::CheckProbe(*c);
  EXPECT_TRUE(st.ok()) << st.ToString();
  auto m = MeasureCollective(*c, CollOp::kAllReduce, 4 << 20, 3);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  if (c->rank() == 0) {
    std::printf("allreduce 4 MiB on %d ranks: %.3f ms, algbw %.2f GB/s, busbw %.2f GB/s\n", m->ranks,
                m->time_s * 1e3, m->algbw_gbps, m->busbw_gbps);
  }
}

TEST(MpiComm, TwoCommsFromTwoThreads) {
  auto a = MakeComm(), b = MakeComm();
  ASSERT_TRUE(a && b);
  Status sa, sb;
  std::thread ta([&] {
    for (int i = 0; i < 20 && sa.ok(); ++i) sa = commtest::CheckAllReduce(*a, 1000 + static_cast<size_t>(i));
  });
  std::thread tb([&] {
    for (int i = 0; i < 20 && sb.ok(); ++i) sb = commtest::CheckReduceScatter(*b, 333 + static_cast<size_t>(i), false);
  });
  ta.join();
  tb.join();
  EXPECT_TRUE(sa.ok()) << sa.ToString();
  EXPECT_TRUE(sb.ok()) << sb.ToString();
}

TEST(MpiComm, PeerThatNeverArrivesTimesOutWithAborted) {
  auto c = MakeComm(0.5);
  ASSERT_TRUE(c);
  if (c->size() < 2) GTEST_SKIP() << "needs 2 ranks";
  if (c->rank() == 0) {
    auto t0 = std::chrono::steady_clock::now();
    Status st = c->Barrier();
    double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(st.code(), Code::kAborted) << st.ToString();
    EXPECT_NE(st.message().find("MPI_Ibarrier"), std::string::npos) << st.ToString();
    EXPECT_LT(waited, 5.0);
    EXPECT_TRUE(c->broken());
    float x = 1;
    EXPECT_EQ(c->AllReduce(&x, 1).code(), Code::kAborted);  // fails at once, no hang
  } else {
    // Late (not dead): arrives after rank 0 gave up, so the job can continue.
    std::this_thread::sleep_for(std::chrono::milliseconds(2000));
    c->set_timeout_s(60);
    Status st = c->Barrier();
    EXPECT_TRUE(st.ok()) << st.ToString();
  }
  c.reset();
  auto fresh = MakeComm();  // the job goes on with a new communicator
  ASSERT_TRUE(fresh);
  EXPECT_TRUE(fresh->Barrier().ok());
}

}  // namespace
}  // namespace zinf

int main(int argc, char** argv) {
  // Ranks other than 0 print failures only (the launcher's rank variable is read before
  // MPI_Init because gtest picks its printer at initialisation).
  for (const char* var : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"}) {
    const char* v = std::getenv(var);
    if (v != nullptr && std::string(v) != "0") GTEST_FLAG_SET(brief, true);
  }
  ::testing::InitGoogleTest(&argc, argv);
  auto session = zinf::MpiSession::Init(&argc, &argv);
  if (!session.ok()) {
    std::fprintf(stderr, "%s\n", session.status().ToString().c_str());
    return 1;
  }
  int rc = RUN_ALL_TESTS();
  if (rc != 0) std::fprintf(stderr, "rank %d: tests failed\n", (*session)->world_rank());
  return rc;
}
