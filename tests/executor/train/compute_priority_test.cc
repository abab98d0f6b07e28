#include "executor/train/compute_priority.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <thread>

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

TEST(ComputePriority, RejectsOutOfRange) {
  EXPECT_EQ(SetThreadNice(20).code(), Code::kInvalidArgument);
  EXPECT_EQ(SetThreadNice(-1).code(), Code::kInvalidArgument);
  EXPECT_TRUE(SetThreadNice(0).ok());
}

}  // namespace
}  // namespace zinf
