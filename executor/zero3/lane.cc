#include "executor/zero3/lane.h"

#include <chrono>

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

Lane::Lane(std::string name) : name_(std::move(name)), thread_([this] { Loop(); }) {}

Lane::~Lane() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
    cv_.notify_all();
  }
  thread_.join();
}

SignalPtr Lane::Submit(std::function<Status()> job) {
  auto sig = std::make_shared<Signal>();
  std::lock_guard<std::mutex> l(mu_);
  q_.emplace_back(std::move(job), sig);
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

void Lane::Loop() {
  std::unique_lock<std::mutex> l(mu_);
  while (true) {
    cv_.wait(l, [&] { return stop_ || !q_.empty(); });
    if (q_.empty()) {
      if (stop_) return;
      continue;
    }
    auto [job, sig] = std::move(q_.front());
    q_.pop_front();
    ++running_;
    l.unlock();
    auto t0 = std::chrono::steady_clock::now();
    Status s = job();
    double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    sig->Set(std::move(s));
    l.lock();
    busy_s_ += dt;
    --running_;
    if (q_.empty() && running_ == 0) idle_cv_.notify_all();
  }
}

}  // namespace zinf
