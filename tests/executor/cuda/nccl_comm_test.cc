// NcclComm on device buffers under mpirun (tests/mpi_run.sh NP): every collective against a
// host reference computed from every rank's (regenerable) input. NCCL's summation order is
// not the rank order (see nccl_comm.h), so sums are compared with a tolerance; gathers and
// broadcasts bit for bit. Exit 77 (skip) without a device per rank.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "executor/backend/cuda/cuda_backend.h"
#include "executor/comm/mpi_session.h"
#include "executor/comm/nccl_comm.h"
#include "tests/executor/cuda/cuda_test_util.h"

#include <cuda_runtime_api.h>

namespace zinf {
namespace {

NcclComm* g_comm = nullptr;
Backend* g_be = nullptr;

std::vector<float> RankData(int rank, size_t n, unsigned salt) {
  std::mt19937 rng(1000u * salt + static_cast<unsigned>(rank));
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng) * std::ldexp(1.0f, static_cast<int>(rng() % 16) - 8);
  return v;
}

DeviceBuffer Dev(const std::vector<float>& h) { return cudatest::Upload(g_be, h); }
std::vector<float> Host(const DeviceBuffer& d, size_t n) { return cudatest::Download<float>(g_be, d.data(), n); }

class Nccl : public ::testing::TestWithParam<size_t> {};

TEST_P(Nccl, AllGather) {
  const size_t count = GetParam();
  const int R = g_comm->size(), me = g_comm->rank();
  std::vector<float> want;
  for (int q = 0; q < R; ++q) {
    auto v = RankData(q, count, 1);
    want.insert(want.end(), v.begin(), v.end());
  }
  DeviceBuffer send = Dev(RankData(me, count, 1));
  DeviceBuffer recv = Dev(std::vector<float>(count * R, -1.0f));
  ASSERT_TRUE(g_comm->AllGather(send.as<float>(), count, recv.as<float>()).ok());
  EXPECT_EQ(Host(recv, count * R), want);
  // In place: send aliases recv + rank * count.
  DeviceBuffer inpl = Dev(std::vector<float>(count * R, -1.0f));
  auto mine = RankData(me, count, 1);
  ASSERT_TRUE(g_be->CopyH2D(inpl.as<float>() + me * count, mine.data(), count * 4).ok());
  g_be->Synchronize(g_be->ComputeStream());
  ASSERT_TRUE(g_comm->AllGather(inpl.as<float>() + me * count, count, inpl.as<float>()).ok());
  EXPECT_EQ(Host(inpl, count * R), want);
}

TEST_P(Nccl, ReduceScatterAndAllReduce) {
  const size_t count = GetParam();
  const int R = g_comm->size(), me = g_comm->rank();
  std::vector<float> sum(count * R, 0.0f);
  for (int q = 0; q < R; ++q) {
    auto v = RankData(q, count * R, 2);
    for (size_t i = 0; i < v.size(); ++i) sum[i] += v[i];
  }
  const double tol = 1e-6 * R;
  DeviceBuffer send = Dev(RankData(me, count * R, 2));
  DeviceBuffer recv = Dev(std::vector<float>(count, 0.0f));
  ASSERT_TRUE(g_comm->ReduceScatter(send.as<float>(), count, recv.as<float>()).ok());
  std::vector<float> want_rs(sum.begin() + me * count, sum.begin() + (me + 1) * count);
  EXPECT_TRUE(cudatest::Close(want_rs, Host(recv, count), tol, tol));
  // In place: recv aliases send + rank * count.
  ASSERT_TRUE(g_comm->ReduceScatter(send.as<float>(), count, send.as<float>() + me * count).ok());
  auto all = Host(send, count * R);
  EXPECT_TRUE(cudatest::Close(want_rs, std::vector<float>(all.begin() + me * count, all.begin() + (me + 1) * count), tol, tol));
  DeviceBuffer ar = Dev(RankData(me, count * R, 2));
  ASSERT_TRUE(g_comm->AllReduce(ar.as<float>(), count * R).ok());
  EXPECT_TRUE(cudatest::Close(sum, Host(ar, count * R), tol, tol));
}

TEST_P(Nccl, Broadcast) {
  const size_t count = GetParam();
  const int R = g_comm->size(), me = g_comm->rank();
  const int root = R - 1;
  DeviceBuffer b = Dev(RankData(me, count, 3));
  ASSERT_TRUE(g_comm->Broadcast(b.as<float>(), count, root).ok());
  EXPECT_EQ(Host(b, count), RankData(root, count, 3));
  std::vector<float> raw = RankData(me, count, 4);
  DeviceBuffer bytes = Dev(raw);
  ASSERT_TRUE(g_comm->BroadcastBytes(bytes.data(), count * 4 - 1, 0).ok());
  auto got = Host(bytes, count);
  auto want = RankData(0, count, 4);
  EXPECT_EQ(std::memcmp(got.data(), want.data(), count * 4 - 1), 0);
  ASSERT_TRUE(g_comm->Barrier().ok());
}

INSTANTIATE_TEST_SUITE_P(Counts, Nccl, ::testing::Values(size_t{1}, size_t{1000}, size_t{1} << 20));

TEST(NcclBasics, AsyncInFlightAndZeroCount) {
  const int R = g_comm->size();
  const size_t count = 4096;
  DeviceBuffer a = Dev(std::vector<float>(count, 1.0f)), b = Dev(std::vector<float>(count, 2.0f));
  CommHandle h1 = g_comm->AllReduceAsync(a.as<float>(), count);
  CommHandle h2 = g_comm->AllReduceAsync(b.as<float>(), count);
  EXPECT_TRUE(g_comm->AllReduceAsync(a.as<float>(), 0).Wait().ok());
  ASSERT_TRUE(h2.Wait().ok());
  ASSERT_TRUE(h1.Wait().ok());
  EXPECT_EQ(Host(a, count), std::vector<float>(count, 1.0f * R));
  EXPECT_EQ(Host(b, count), std::vector<float>(count, 2.0f * R));
  EXPECT_EQ(g_comm->name(), "nccl");
  EXPECT_FALSE(g_comm->broken());
}

}  // namespace
}  // namespace zinf

int main(int argc, char** argv) {
  auto session_r = zinf::MpiSession::Init(&argc, &argv);
  if (!session_r.ok()) {
    std::fprintf(stderr, "MPI init failed: %s\n", session_r.status().ToString().c_str());
    return 1;
  }
  auto session = std::move(session_r).value();
  std::string why;
  int devices = 0;
  if (!zinf::CudaDeviceAvailable(&why)) {
    std::printf("no CUDA device (%s): skipping\n", why.c_str());
    return 77;
  }
  (void)cudaGetDeviceCount(&devices);
  if (devices < session->world_size()) {
    std::printf("no CUDA device per rank (%d devices, %d ranks): skipping\n", devices, session->world_size());
    return 77;
  }
  int rc = 1;
  {
    auto comm_r = zinf::NcclComm::Create({});
    if (!comm_r.ok()) {
      std::fprintf(stderr, "NcclComm::Create: %s\n", comm_r.status().ToString().c_str());
      zinf::MpiSession::Abort(1);
    }
    auto comm = std::move(comm_r).value();
    zinf::CudaBackendOptions o;
    o.capacity_bytes = size_t{256} << 20;
    o.device = comm->device();
    auto be_r = zinf::MakeCudaBackend(o);
    if (!be_r.ok()) {
      std::fprintf(stderr, "MakeCudaBackend: %s\n", be_r.status().ToString().c_str());
      zinf::MpiSession::Abort(1);
    }
    auto be = std::move(be_r).value();
    zinf::g_comm = comm.get();
    zinf::g_be = be.get();
    ::testing::InitGoogleTest(&argc, argv);
    if (session->world_rank() != 0) {
      ::testing::TestEventListeners& l = ::testing::UnitTest::GetInstance()->listeners();
      delete l.Release(l.default_result_printer());
    }
    rc = RUN_ALL_TESTS();
    zinf::g_comm = nullptr;
    zinf::g_be = nullptr;
  }
  return rc;
}
