#include "executor/train/compute_priority.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <thread>
#include <vector>

namespace zinf {
namespace {

TEST(ComputePriority, LoweredOnlyWhenRanksOutnumberCores) {
  EXPECT_EQ(DefaultComputeNice(4, 2), kOversubscribedComputeNice);
  EXPECT_EQ(DefaultComputeNice(3, 2), kOversubscribedComputeNice);
  EXPECT_EQ(DefaultComputeNice(2, 2), 0);
  EXPECT_EQ(DefaultComputeNice(1, 16), 0);
  EXPECT_EQ(DefaultComputeNice(4, 0), 0);  // unknown core count: leave it
}

TEST(ComputePriority, RanksOnThisNodeFromTheLauncher) {
  ::unsetenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  ::unsetenv("MPI_LOCALNRANKS");
  ::unsetenv("SLURM_NTASKS_PER_NODE");
  EXPECT_EQ(RanksOnThisNode(8), 8);
  ::setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "2", 1);
  EXPECT_EQ(RanksOnThisNode(8), 2);
  ::setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "x2", 1);  // not a number: the next source
  ::setenv("MPI_LOCALNRANKS", "4", 1);
  EXPECT_EQ(RanksOnThisNode(8), 4);
  ::unsetenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  ::unsetenv("MPI_LOCALNRANKS");
}

int ThreadNice() {
  errno = 0;
  return getpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)));
}

TEST(ComputePriority, SetsTheCallingThreadOnly) {
  const int before = ThreadNice();
  int inside = -100, child = -100;
  Status st;
  std::thread t([&] {
    st = SetThreadNice(7);
    inside = ThreadNice();
    std::thread([&] { child = ThreadNice(); }).join();  // created after: inherits
  });
  t.join();
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(inside, 7);
  EXPECT_EQ(child, 7);
  EXPECT_EQ(ThreadNice(), before);  // this thread is untouched
}

TEST(ComputePriority, LocalRankFromTheLauncher) {
  ::unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
  ::unsetenv("MPI_LOCALRANKID");
  ::unsetenv("SLURM_LOCALID");
  EXPECT_EQ(LocalRank(5), 5);
  ::setenv("SLURM_LOCALID", "1", 1);
  EXPECT_EQ(LocalRank(5), 1);
  ::setenv("OMPI_COMM_WORLD_LOCAL_RANK", "3", 1);  // the first source wins
  EXPECT_EQ(LocalRank(5), 3);
  ::unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
  ::unsetenv("SLURM_LOCALID");
}

std::vector<int> AllowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

TEST(ComputePriority, BindsTheCallingThreadToOneAllowedCpu) {
  const std::vector<int> before = AllowedCpus();
  ASSERT_FALSE(before.empty());
  const int n = static_cast<int>(before.size());
  std::vector<int> inside, child;
  Status st;
  bool unrestricted_after = true;
  int count_after = 0;
  EXPECT_EQ(AllowedCpuCount(), n);
  std::thread t([&] {
    st = BindThreadToCpu(n + 1);  // modulo the CPUs allowed: the second of them (or the only one)
    inside = AllowedCpus();
    count_after = AllowedCpuCount();
    unrestricted_after = ThreadAffinityIsUnrestricted();
    std::thread([&] { child = AllowedCpus(); }).join();  // created after: inherits
  });
  t.join();
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(inside.size(), 1u);
  EXPECT_EQ(inside[0], before[static_cast<size_t>((n + 1) % n)]);
  EXPECT_EQ(child, inside);
  EXPECT_EQ(count_after, 1);
  EXPECT_EQ(AllowedCpus(), before);  // this thread is untouched
  if (n > 1) {
    EXPECT_FALSE(unrestricted_after);
  }
}

TEST(ComputePriority, RejectsOutOfRange) {
  EXPECT_EQ(SetThreadNice(20).code(), Code::kInvalidArgument);
  EXPECT_EQ(SetThreadNice(-1).code(), Code::kInvalidArgument);
  EXPECT_TRUE(SetThreadNice(0).ok());
}

}  // namespace
}  // namespace zinf
