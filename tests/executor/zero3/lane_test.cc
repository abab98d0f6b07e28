// Lane: jobs run in submission order on the lane's thread, and cpu_s is that thread's CPU
// time: its jobs' work, not its waits.
#include "executor/zero3/lane.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

#include "core/cpu_clock.h"

namespace zinf {
namespace {

TEST(Lane, RunsInOrderAndCountsItsThreadsCpu) {
  Lane lane("zinf:test");
  std::vector<int> order;
  const double idle_cpu = lane.cpu_s();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_LT(lane.cpu_s() - idle_cpu, 0.02);  // waiting for work costs (almost) nothing
  auto sleep_job = lane.Submit([&] {
    order.push_back(1);
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
    return Status::Ok();
  });
  auto burn_job = lane.Submit([&] {
    order.push_back(2);
    const double start = CurrentThreadCpuSeconds();
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    volatile double x = 1;
    while (CurrentThreadCpuSeconds() - start < 0.06 && std::chrono::steady_clock::now() < give_up) x = x * 1.0000001 + 1e-9;
    return Status::Ok();
  });
  ASSERT_TRUE(sleep_job->Wait().ok());
  ASSERT_TRUE(burn_job->Wait().ok());
  lane.Drain();
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
  const double cpu = lane.cpu_s() - idle_cpu;
  EXPECT_GE(cpu, 0.06);
  EXPECT_LT(cpu, 0.06 + 0.04);  // the 60 ms sleep is not counted
  EXPECT_GE(lane.busy_s(), 0.12 - 0.005);  // busy time is wall time, sleep included
}

}  // namespace
}  // namespace zinf
