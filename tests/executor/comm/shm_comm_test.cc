// ShmComm: ranks as forked processes of one node meeting in a shared-memory segment,
// against the same serial references as ThreadComm and MpiComm (bit for bit), with small
// slots so that every op runs in several chunks; timeouts, mismatches, bad segments.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "executor/comm/shm_comm.h"
#include "tests/executor/comm/comm_checks.h"

namespace zinf {
namespace {

std::string SegmentName(const char* what) { return "/zinf-test-" + std::string(what) + "-" + std::to_string(::getpid()); }

// Forks `n` processes, rank r running fn(r) (its exit code: 0 for success); returns the
// exit codes by rank. The segment is created before the fork and unlinked after it.
std::vector<int> RunRanks(int n, const std::function<int(int)>& fn) {
  std::vector<pid_t> pids;
  for (int r = 0; r < n; ++r) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      const int rc = fn(r);
      std::fflush(nullptr);
      ::_exit(rc);
    }
    pids.push_back(pid);
  }
  std::vector<int> codes;
  for (pid_t pid : pids) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    codes.push_back(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  }
  return codes;
}

int Report(int rank, const Status& st) {
  if (st.ok()) return 0;
  std::fprintf(stderr, "rank %d: %s\n", rank, st.ToString().c_str());
  return 1;
}

class ShmCommRanks : public ::testing::TestWithParam<int> {};

TEST_P(ShmCommRanks, AllCollectivesMatchSerialReference) {
  const int n = GetParam();
  const std::string name = SegmentName("all");
  {  // 4 KiB slots: the checks' large counts run in many chunks
    auto creator = ShmComm::Open(name, 0, n, /*create=*/true, CommOptions{60}, 4096);
    ASSERT_TRUE(creator.ok()) << creator.status().ToString();
  }
  std::vector<int> codes = RunRanks(n, [&](int r) {
    auto c = ShmComm::Open(name, r, n, /*create=*/false, CommOptions{60}, 4096);
    if (!c.ok()) return Report(r, c.status());
    if ((*c)->name() != "shm" || (*c)->rank() != r || (*c)->size() != n) return 2;
    return Report(r, commtest::RunAllChecks(**c));
  });
  ASSERT_TRUE(ShmComm::Unlink(name).ok());
  for (int r = 0; r < n; ++r) EXPECT_EQ(codes[static_cast<size_t>(r)], 0) << "rank " << r;
}

INSTANTIATE_TEST_SUITE_P(R, ShmCommRanks, ::testing::Values(1, 2, 3, 4),
                         [](const auto& info) { return std::string("R").append(std::to_string(info.param)); });

// One barrier per round, two slot sets: a rank that runs ahead into the next round (or the
// next op) must never overwrite what a slower rank is still reading. Ranks that pause at
// different points between ops, many multi-chunk ops back to back, every result checked.
TEST(ShmComm, RanksRunningAheadNeverOverwriteWhatOthersRead) {
  const int n = 3;
  const std::string name = SegmentName("ahead");
  ASSERT_TRUE(ShmComm::Open(name, 0, n, /*create=*/true, CommOptions{60}, 4096).ok());
  std::vector<int> codes = RunRanks(n, [&](int r) {
    auto c = ShmComm::Open(name, r, n, /*create=*/false, CommOptions{60}, 4096);
    if (!c.ok()) return Report(r, c.status());
    const size_t count = 2500;  // 10 KB a rank: 3 rounds of 4 KiB slots
    std::vector<float> mine(count), all(count * n), sum(count);
    for (int it = 0; it < 300; ++it) {
      if ((it + r) % 7 == 0) ::usleep(static_cast<useconds_t>(200 * (r + 1)));
      for (size_t i = 0; i < count; ++i) mine[i] = static_cast<float>(it * 7 + r * 1000 + static_cast<int>(i % 97));
      if (Status st = (*c)->AllGather(mine.data(), count, all.data()); !st.ok()) return Report(r, st);
      for (int q = 0; q < n; ++q)
        for (size_t i = 0; i < count; i += 13)
          if (all[static_cast<size_t>(q) * count + i] != static_cast<float>(it * 7 + q * 1000 + static_cast<int>(i % 97)))
            return Report(r, Internal("allgather " + std::to_string(it) + ": rank " + std::to_string(q) + "'s part is wrong"));
      std::vector<float> rs(count / n);
      std::vector<float> in(count - count % n, static_cast<float>(it + r));
      if (Status st = (*c)->ReduceScatter(in.data(), count / n, rs.data()); !st.ok()) return Report(r, st);
      const float want = static_cast<float>(3 * it + 0 + 1 + 2);
      for (float v : rs)
        if (v != want) return Report(r, Internal("reduce-scatter " + std::to_string(it) + " is wrong"));
    }
    return 0;
  });
  ASSERT_TRUE(ShmComm::Unlink(name).ok());
  for (int r = 0; r < n; ++r) EXPECT_EQ(codes[static_cast<size_t>(r)], 0) << "rank " << r;
}

TEST(ShmComm, MissingRankTimesOutWithAbortedAndBreaksTheGroup) {
  const std::string name = SegmentName("timeout");
  ASSERT_TRUE(ShmComm::Open(name, 0, 3, true, CommOptions{5}).ok());
  std::vector<int> codes = RunRanks(3, [&](int r) {
    auto c = ShmComm::Open(name, r, 3, false, CommOptions{0.5});
    if (!c.ok()) return Report(r, c.status());
    if (r == 2) return 0;  // never arrives
    std::vector<float> x(16, 1.0f);
    Status st = (*c)->AllReduce(x.data(), x.size());
    if (st.code() != Code::kAborted) return 3;
    if (st.message().find("rank(s) 2") == std::string::npos) return Report(r, st) + 3;
    // Broken for good: the next op fails at once, also on a rank that did not time out itself.
    Status again = (*c)->Barrier();
    return again.code() == Code::kAborted ? 0 : 5;
  });
  ASSERT_TRUE(ShmComm::Unlink(name).ok());
  EXPECT_EQ(codes, (std::vector<int>{0, 0, 0}));
}

TEST(ShmComm, MismatchedCollectivesFailOnEveryRank) {
  const std::string name = SegmentName("mismatch");
  ASSERT_TRUE(ShmComm::Open(name, 0, 2, true).ok());
  std::vector<int> codes = RunRanks(2, [&](int r) {
    auto c = ShmComm::Open(name, r, 2, false, CommOptions{30});
    if (!c.ok()) return Report(r, c.status());
    std::vector<float> x(8, 1.0f), y(16);
    Status st = (*c)->AllGather(x.data(), r == 0 ? 4 : 5, y.data());
    if (st.code() != Code::kInvalidArgument || st.message().find("collective mismatch") == std::string::npos) return 1;
    return Report(r, (*c)->Barrier());  // the group is still usable afterwards
  });
  ASSERT_TRUE(ShmComm::Unlink(name).ok());
  EXPECT_EQ(codes, (std::vector<int>{0, 0}));
}

TEST(ShmComm, BadArgumentsAndForeignSegmentsAreClearErrors) {
  EXPECT_EQ(ShmComm::Open("no-slash", 0, 2, true).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(ShmComm::Open("/zinf-x", 2, 2, true).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(ShmComm::Open("/zinf-x", 0, 2, true, {}, 1000).status().code(), Code::kInvalidArgument);
  const std::string name = SegmentName("size");
  auto made = ShmComm::Open(name, 0, 2, true);
  ASSERT_TRUE(made.ok());
  auto other = ShmComm::Open(name, 0, 3, false);  // made for 2 ranks
  EXPECT_EQ(other.status().code(), Code::kInvalidArgument);
  EXPECT_NE(other.status().message().find(name), std::string::npos);
  EXPECT_EQ(ShmComm::Open(name, 1, 2, true).status().code(), Code::kIo);  // exists already
  ASSERT_TRUE(ShmComm::Unlink(name).ok());
  EXPECT_EQ(ShmComm::Open(name, 1, 2, false).status().code(), Code::kIo);  // gone
  EXPECT_TRUE(ShmComm::Unlink(name).ok());  // unlinking twice is fine
}

}  // namespace
}  // namespace zinf
