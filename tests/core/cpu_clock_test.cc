// CPU clocks: a thread's clock counts its own work, not its sleep or another thread's work.
#include "core/cpu_clock.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace zinf {
namespace {

// Spins until the calling thread has used `s` seconds of CPU (or 5 s of wall time pass).
void Burn(double s) {
  const double start = CurrentThreadCpuSeconds();
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  volatile double x = 1;
  while (CurrentThreadCpuSeconds() - start < s && std::chrono::steady_clock::now() < give_up)
    for (int i = 0; i < 10000; ++i) x = x * 1.0000001 + 1e-9;
}

TEST(CpuClock, ThreadClockCountsWorkNotSleep) {
  const double t0 = CurrentThreadCpuSeconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const double slept = CurrentThreadCpuSeconds() - t0;
  EXPECT_LT(slept, 0.05);
  Burn(0.05);
  EXPECT_GE(CurrentThreadCpuSeconds() - t0, 0.05);
}

TEST(CpuClock, AnotherThreadsClockAndTheProcess) {
  const double p0 = ProcessCpuSeconds();
  std::thread worker([] { Burn(0.08); std::this_thread::sleep_for(std::chrono::milliseconds(200)); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const double mine0 = CurrentThreadCpuSeconds();
  // Wait until the worker has burnt its share, reading its clock from here.
  double seen = 0;
  for (int i = 0; i < 500 && seen < 0.08; ++i) {
    seen = ThreadCpuSeconds(worker.native_handle());
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_GE(seen, 0.08);
  EXPECT_LT(CurrentThreadCpuSeconds() - mine0, 0.05);  // this thread mostly slept
  worker.join();
  EXPECT_GE(ProcessCpuSeconds() - p0, 0.08);
}

TEST(CpuClock, NodeTimes) {
  const NodeCpuTimes a = ReadNodeCpuTimes();
  Burn(0.05);
  const NodeCpuTimes b = ReadNodeCpuTimes();
  ASSERT_GT(a.total_s, 0);  // Linux: /proc/stat
  EXPECT_LE(a.busy_s, a.total_s);
  EXPECT_GE(b.total_s, a.total_s);
  EXPECT_GE(b.busy_s, a.busy_s);
}

}  // namespace
}  // namespace zinf
