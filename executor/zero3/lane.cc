#include "executor/zero3/lane.h"

#include <chrono>

#include "core/cpu_clock.h"
#include "core/process_env.h"

namespace zinf {

void Signal::Set(Status s) {
  std::lock_guard<std::mutex> l(mu_);
  status_ = std::move(s);
  done_ = true;
  cv_.notify_all();
}

Status Signal::Wait() {
  std::unique_lock<std::mutex> l(mu_);
  cv_.wait(l, [&] { return done_; });
  return status_;
}

bool Signal::IsSet() const {
  std::lock_guard<std::mutex> l(mu_);
  return done_;
}

Lane::Lane(std::string name) : name_(std::move(name)), thread_([this] { Loop(); }), handle_(thread_.native_handle()) {}

Lane::~Lane() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
    cv_.notify_all();
  }
  thread_.join();
}

void Lane::SetTrace(reports::ChromeTraceWriter* trace, int64_t pid, int64_t tid) {
  std::lock_guard<std::mutex> l(mu_);
  trace_ = trace;
  pid_ = pid;
  tid_ = tid;
  if (trace) trace->SetThreadName(pid, tid, name_);
}

SignalPtr Lane::Submit(std::function<Status()> job, std::string name) {
  auto sig = std::make_shared<Signal>();
  std::lock_guard<std::mutex> l(mu_);
  q_.push_back(Job{std::move(job), sig, std::move(name)});
  cv_.notify_all();
  return sig;
}

void Lane::Drain() {
  std::unique_lock<std::mutex> l(mu_);
  idle_cv_.wait(l, [&] { return q_.empty() && running_ == 0; });
}

double Lane::busy_s() const {
  std::lock_guard<std::mutex> l(mu_);
  return busy_s_;
}

double Lane::cpu_s() const { return ThreadCpuSeconds(handle_); }

void Lane::Loop() {
  SetThreadName(name_.c_str());
  std::unique_lock<std::mutex> l(mu_);
  while (true) {
    cv_.wait(l, [&] { return stop_ || !q_.empty(); });
    if (q_.empty()) {
      if (stop_) return;
      continue;
    }
    Job job = std::move(q_.front());
    q_.pop_front();
    ++running_;
    reports::ChromeTraceWriter* trace = trace_;
    l.unlock();
    const double ts = trace ? trace->NowUs() : 0;
    auto t0 = std::chrono::steady_clock::now();
    // Traced jobs carry the lane thread's CPU in them: their time less it is waiting (for the
    // drive, the other ranks) or off the core. The CPU clock is read inside the wall clock's
    // interval, so it never exceeds it.
    const double cpu0 = trace ? CurrentThreadCpuSeconds() : 0;
    Status s = job.fn();
    const double cpu = trace ? CurrentThreadCpuSeconds() - cpu0 : 0;
    double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (trace) trace->Complete(job.name.empty() ? name_ : job.name, name_, ts, dt * 1e6, pid_, tid_, {{"cpu_us", cpu * 1e6}});
    job.sig->Set(std::move(s));
    l.lock();
    busy_s_ += dt;
    --running_;
    if (q_.empty() && running_ == 0) idle_cv_.notify_all();
  }
}

}  // namespace zinf
