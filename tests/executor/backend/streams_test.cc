#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "tests/executor/backend/test_util.h"

namespace zinf {
namespace {

using namespace std::chrono_literals;

TEST(CpuStreams, TasksRunInOrder) {
  auto be = testing::TestBackend();
  Stream* s = *be->CreateStream("copy");
  std::vector<int> order;
  for (int i = 0; i < 100; ++i) be->Enqueue(s, [&order, i] { order.push_back(i); });
  be->Synchronize(s);
  ASSERT_EQ(order.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(order[i], i);
}

TEST(CpuStreams, ComputeStreamIsSynchronous) {
  auto be = testing::TestBackend();
  int x = 0;
  be->Enqueue(be->ComputeStream(), [&] { x = 7; });
  EXPECT_EQ(x, 7);
}

TEST(CpuStreams, EventOrdersWorkAcrossStreams) {
  auto be = testing::TestBackend();
  Stream* a = *be->CreateStream("a");
  Stream* b = *be->CreateStream("b");
  auto ev = std::move(be->CreateEvent()).value();
  std::atomic<int> stage{0};
  int seen_by_b = -1;
  be->Enqueue(a, [&] {
    std::this_thread::sleep_for(50ms);
    stage = 1;
  });
  be->Record(ev.get(), a);
  be->Wait(b, ev.get());
  be->Enqueue(b, [&] { seen_by_b = stage.load(); });
  be->Synchronize(b);
  EXPECT_EQ(seen_by_b, 1);
  EXPECT_TRUE(be->Query(ev.get()));
}

TEST(CpuStreams, HostSynchronizeOnEventAndQuery) {
  auto be = testing::TestBackend();
  Stream* a = *be->CreateStream("a");
  auto ev = std::move(be->CreateEvent()).value();
  EXPECT_TRUE(be->Query(ev.get()));  // never recorded: complete
  be->Synchronize(ev.get());         // returns at once
  std::atomic<bool> release{false};
  be->Enqueue(a, [&] {
    while (!release) std::this_thread::sleep_for(1ms);
  });
  be->Record(ev.get(), a);
  EXPECT_FALSE(be->Query(ev.get()));
  release = true;
  be->Synchronize(ev.get());
  EXPECT_TRUE(be->Query(ev.get()));
}

TEST(CpuStreams, ComputeStreamWaitBlocksHost) {
  auto be = testing::TestBackend();
  Stream* a = *be->CreateStream("h2d");
  auto ev = std::move(be->CreateEvent()).value();
  std::atomic<int> v{0};
  be->Enqueue(a, [&] {
    std::this_thread::sleep_for(30ms);
    v = 5;
  });
  be->Record(ev.get(), a);
  be->Wait(be->ComputeStream(), ev.get());  // the host thread is the compute stream
  EXPECT_EQ(v.load(), 5);
}

TEST(CpuStreams, AsyncCopiesRoundTrip) {
  auto be = testing::TestBackend();
  Stream* h2d = *be->CreateStream("h2d");
  Stream* d2h = *be->CreateStream("d2h");
  auto ev = std::move(be->CreateEvent()).value();
  std::vector<float> src = testing::RandomVec(10000, 1), dst(10000, 0.0f);
  testing::DevVec<float> dev(be.get(), 10000);
  ASSERT_TRUE(be->CopyH2D(dev.data(), src.data(), src.size() * 4, h2d).ok());
  be->Record(ev.get(), h2d);
  be->Wait(d2h, ev.get());
  ASSERT_TRUE(be->CopyD2H(dst.data(), dev.data(), dst.size() * 4, d2h).ok());
  be->Synchronize(d2h);
  EXPECT_EQ(src, dst);
  ASSERT_TRUE(be->SynchronizeAll().ok());
}

TEST(CpuStreams, CopiesValidateDeviceRanges) {
  auto be = testing::TestBackend(1 << 20);
  std::vector<float> host(16);
  testing::DevVec<float> dev(be.get(), 16);
  EXPECT_EQ(be->CopyH2D(host.data(), dev.data(), 64).code(), Code::kInvalidArgument);
  EXPECT_EQ(be->CopyD2H(dev.data(), host.data(), 64).code(), Code::kInvalidArgument);
  EXPECT_FALSE(be->CopyD2D(dev.data(), dev.data(), 2 << 20).ok());  // runs past the arena
  EXPECT_TRUE(be->Memset(dev.data(), 0, 64).ok());
  EXPECT_EQ(dev[3], 0.0f);
}

TEST(CpuStreams, RecordTwiceWaitsForLatest) {
  auto be = testing::TestBackend();
  Stream* a = *be->CreateStream("a");
  auto ev = std::move(be->CreateEvent()).value();
  std::atomic<int> n{0};
  be->Record(ev.get(), a);
  be->Enqueue(a, [&] {
    std::this_thread::sleep_for(20ms);
    n = 2;
  });
  be->Record(ev.get(), a);
  be->Synchronize(ev.get());
  EXPECT_EQ(n.load(), 2);
}

}  // namespace
}  // namespace zinf
