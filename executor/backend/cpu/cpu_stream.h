// CPU streams and events.
//   CpuStream(inline = true): the compute stream; work runs on the calling thread
//   at once. CpuStream(inline = false): a worker thread executing tasks in order.
//   CpuEvent: generation counters; Record bumps `recorded` and, when the stream
//   reaches it, sets `completed`. Wait/Synchronize wait for the generation that
//   was current when they were called (CUDA semantics).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "executor/backend/backend.h"

namespace zinf::cpu {

struct EventState {
  std::mutex mu;
  std::condition_variable cv;
  uint64_t recorded = 0;
  uint64_t completed = 0;
  void Complete(uint64_t gen);
  void WaitFor(uint64_t gen);
};

class CpuEvent final : public Event {
 public:
  CpuEvent() : state_(std::make_shared<EventState>()) {}
  const std::shared_ptr<EventState>& state() const { return state_; }

 private:
  std::shared_ptr<EventState> state_;
};

class CpuStream final : public Stream {
 public:
  CpuStream(std::string name, bool inline_stream);
  ~CpuStream() override;  // drains, then joins the worker
  std::string_view name() const override { return name_; }
  bool is_inline() const { return inline_; }

  void Enqueue(std::function<void()> fn);
  void Synchronize();  // host waits until every enqueued task finished
  void Record(CpuEvent* ev);
  void Wait(CpuEvent* ev);

 private:
  void Loop();

  const std::string name_;
  const bool inline_;
  std::mutex mu_;
  std::condition_variable cv_work_, cv_idle_;
  std::deque<std::function<void()>> queue_;
  bool busy_ = false;
  bool stop_ = false;
  std::thread worker_;
};

}  // namespace zinf::cpu
