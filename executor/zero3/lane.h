// Lane: one worker thread running submitted jobs in submission order (a CPU "stream"),
// and Signal, a one-shot completion flag carrying a Status. The coordinator's NVMe, H2D
// and comm lanes overlap with compute; their order of submission is deterministic (the
// compute thread submits), so every rank issues its collectives in the same order.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "core/status.h"
#include "reports/chrome_trace.h"

namespace zinf {

class Signal {
 public:
  void Set(Status s = Status::Ok());
  Status Wait();  // blocks until Set
  bool IsSet() const;

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  Status status_;
};
using SignalPtr = std::shared_ptr<Signal>;

class Lane {
 public:
  explicit Lane(std::string name);
  ~Lane();  // drains
  // Runs job on the lane; the returned signal carries its Status. With a trace set, the
  // job is recorded as a complete event `name` on this lane's track.
  SignalPtr Submit(std::function<Status()> job, std::string name = {});
  void SetTrace(reports::ChromeTraceWriter* trace, int64_t pid, int64_t tid);
  void Drain();  // waits for every submitted job
  const std::string& name() const { return name_; }
  double busy_s() const;  // seconds spent running jobs
  double cpu_s() const;   // CPU time of the lane's thread (user + system), idle waits excluded

 private:
  void Loop();
  std::string name_;
  mutable std::mutex mu_;
  std::condition_variable cv_, idle_cv_;
  struct Job {
    std::function<Status()> fn;
    SignalPtr sig;
    std::string name;
  };
  std::deque<Job> q_;
  reports::ChromeTraceWriter* trace_ = nullptr;
  int64_t pid_ = 0, tid_ = 0;
  bool stop_ = false;
  int running_ = 0;
  double busy_s_ = 0;
  std::thread thread_;
  pthread_t handle_;  // thread_'s, for its CPU clock
};

}  // namespace zinf
