#include "executor/backend/cpu/cpu_stream.h"

#include "core/process_env.h"
namespace zinf::cpu {

void EventState::Complete(uint64_t gen) {
  {
    std::lock_guard<std::mutex> lock(mu);
    if (gen > completed) completed = gen;
  }
  cv.notify_all();
}

void EventState::WaitFor(uint64_t gen) {
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return completed >= gen; });
}

CpuStream::CpuStream(std::string name, bool inline_stream)
    : name_(std::move(name)), inline_(inline_stream) {
  if (!inline_) worker_ = std::thread([this] { Loop(); });
}

CpuStream::~CpuStream() {
  if (inline_) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_work_.notify_all();
  worker_.join();
}

void CpuStream::Loop() {
  SetThreadName(name_.c_str());
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_work_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stop_ and drained
      task = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
    }
    task();
    {
      std::lock_guard<std::mutex> lock(mu_);
      busy_ = false;
      if (queue_.empty()) cv_idle_.notify_all();
    }
  }
}

void CpuStream::Enqueue(std::function<void()> fn) {
  if (inline_) {
    fn();
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(fn));
  }
  cv_work_.notify_one();
}

void CpuStream::Synchronize() {
  if (inline_) return;
  std::unique_lock<std::mutex> lock(mu_);
  cv_idle_.wait(lock, [&] { return queue_.empty() && !busy_; });
}

void CpuStream::Record(CpuEvent* ev) {
  std::shared_ptr<EventState> st = ev->state();
  uint64_t gen;
  {
    std::lock_guard<std::mutex> lock(st->mu);
    gen = ++st->recorded;
  }
  Enqueue([st, gen] { st->Complete(gen); });
}

void CpuStream::Wait(CpuEvent* ev) {
  std::shared_ptr<EventState> st = ev->state();
  uint64_t gen;
  {
    std::lock_guard<std::mutex> lock(st->mu);
    gen = st->recorded;
  }
  Enqueue([st, gen] { st->WaitFor(gen); });
}

}  // namespace zinf::cpu
