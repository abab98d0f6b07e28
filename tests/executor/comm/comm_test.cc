// The Comm base class's threading: a blocking op runs on the caller's thread when the comm
// thread is idle, behind the ops in flight otherwise; ops never overlap and run in issue
// order; issued() counts them. A recording fake Comm (size 1) observes where and when each
// op ran.
#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "executor/comm/comm.h"

namespace zinf {
namespace {

struct Ran {
  size_t count;
  std::thread::id thread;
  std::chrono::steady_clock::time_point begin, end;
};

class RecordingComm : public Comm {
 public:
  RecordingComm() : Comm(CommOptions{}) {}
  ~RecordingComm() override { StopWorker(); }
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string name() const override { return "recording"; }
  std::vector<Ran> ran() const {
    std::lock_guard<std::mutex> l(mu_);
    return ran_;
  }

 protected:
  // An op of count >= 1000 takes 30 ms (the others are instant), so ops issued meanwhile
  // find it in flight.
  Status Execute(const CollArgs& a) override {
    Ran r{a.count, std::this_thread::get_id(), std::chrono::steady_clock::now(), {}};
    if (a.count >= 1000) std::this_thread::sleep_for(std::chrono::milliseconds(30));
    r.end = std::chrono::steady_clock::now();
    std::lock_guard<std::mutex> l(mu_);
    ran_.push_back(r);
    return Status::Ok();
  }

 private:
  mutable std::mutex mu_;
  std::vector<Ran> ran_;
};

std::vector<float> Buf(size_t n) { return std::vector<float>(n, 1.0f); }

TEST(Comm, BlockingOpRunsOnTheCallersThreadWhenTheCommThreadIsIdle) {
  RecordingComm c;
  auto b = Buf(8);
  ASSERT_TRUE(c.AllReduce(b.data(), 8).ok());
  ASSERT_TRUE(c.AllReduce(b.data(), 7).ok());
  auto ran = c.ran();
  ASSERT_EQ(ran.size(), 2u);
  EXPECT_EQ(ran[0].thread, std::this_thread::get_id());
  EXPECT_EQ(ran[1].thread, std::this_thread::get_id());
  EXPECT_EQ(c.issued(), 2);
}

TEST(Comm, BlockingOpIssuedBehindAsyncOpsRunsAfterThemOnTheCommThread) {
  RecordingComm c;
  auto slow = Buf(1000), fast = Buf(5);
  CommHandle h = c.AllReduceAsync(slow.data(), 1000);
  ASSERT_TRUE(c.AllReduce(fast.data(), 5).ok());  // the slow op is in flight: queued behind it
  EXPECT_TRUE(h.Test());
  auto ran = c.ran();
  ASSERT_EQ(ran.size(), 2u);
  EXPECT_EQ(ran[0].count, 1000u);
  EXPECT_EQ(ran[1].count, 5u);
  EXPECT_NE(ran[1].thread, std::this_thread::get_id());
  EXPECT_GE(ran[1].begin, ran[0].end);
  EXPECT_EQ(c.issued(), 2);
}

TEST(Comm, AsyncOpIssuedDuringAnInlineOpWaitsForIt) {
  RecordingComm c;
  auto slow = Buf(1000), fast = Buf(3);
  std::thread other([&] { ASSERT_TRUE(c.AllReduce(slow.data(), 1000).ok()); });  // inline, 30 ms
  // Issue once the inline op has started (it records at its end; wait on issued()).
  while (c.issued() < 1) std::this_thread::yield();
  CommHandle h = c.AllReduceAsync(fast.data(), 3);
  ASSERT_TRUE(h.Wait().ok());
  other.join();
  auto ran = c.ran();
  ASSERT_EQ(ran.size(), 2u);
  EXPECT_EQ(ran[0].count, 1000u);
  EXPECT_EQ(ran[1].count, 3u);
  EXPECT_GE(ran[1].begin, ran[0].end);  // never concurrent, in issue order
}

TEST(Comm, ZeroCountOpsAreNotIssued) {
  RecordingComm c;
  auto b = Buf(1);
  ASSERT_TRUE(c.AllReduce(b.data(), 0).ok());
  ASSERT_TRUE(c.AllReduceAsync(b.data(), 0).Wait().ok());
  EXPECT_EQ(c.issued(), 0);
  EXPECT_TRUE(c.ran().empty());
  ASSERT_TRUE(c.Barrier().ok());  // a barrier has no count and is issued
  EXPECT_EQ(c.issued(), 1);
}

}  // namespace
}  // namespace zinf
