#include "executor/comm/comm.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "core/process_env.h"

namespace zinf {

const char* CollOpName(CollOp op) {
  switch (op) {
    case CollOp::kAllGather: return "allgather";
    case CollOp::kReduceScatter: return "reduce_scatter";
    case CollOp::kAllReduce: return "allreduce";
    case CollOp::kBroadcast: return "broadcast";
    case CollOp::kBarrier: return "barrier";
  }
  return "?";
}

CommHandle CommHandle::Done(Status st) {
  auto s = std::make_shared<detail::CommOpState>();
  s->done = true;
  s->status = std::move(st);
  return CommHandle(std::move(s));
}

Status CommHandle::Wait() const {
  if (!state_) return Status::Ok();
  std::unique_lock<std::mutex> lock(state_->mu);
  state_->cv.wait(lock, [&] { return state_->done; });
  return state_->status;
}

bool CommHandle::Test() const {
  if (!state_) return true;
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->done;
}

Comm::Comm(const CommOptions& options) : timeout_s_(options.timeout_s) {
  worker_ = std::thread([this] { WorkerLoop(); });
}

Comm::~Comm() { StopWorker(); }

void Comm::StopWorker() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return;
    stop_ = true;
  }
  cv_.notify_all();
  if (worker_.joinable()) worker_.join();
}

double Comm::timeout_s() const {
  std::lock_guard<std::mutex> lock(mu_);
  return timeout_s_;
}

void Comm::set_timeout_s(double timeout_s) {
  std::lock_guard<std::mutex> lock(mu_);
  timeout_s_ = timeout_s;
}

bool Comm::broken() const {
  std::lock_guard<std::mutex> lock(mu_);
  return broken_;
}

Status Comm::Check(const CollArgs& args) const {
  const char* op = CollOpName(args.op);
  if (args.count > std::numeric_limits<size_t>::max() / 8 / static_cast<size_t>(size())) {
    return InvalidArgument(fmt::format("{}: count {} too large", op, args.count));
  }
  bool needs_send = args.op == CollOp::kAllGather || args.op == CollOp::kReduceScatter;
  if (args.op != CollOp::kBarrier && (args.recv == nullptr || (needs_send && args.send == nullptr))) {
    return InvalidArgument(fmt::format("{} of {} elements: null buffer", op, args.count));
  }
  if (args.op == CollOp::kBroadcast && (args.root < 0 || args.root >= size())) {
    return InvalidArgument(fmt::format("broadcast: root {} out of range (allowed 0..{})", args.root, size() - 1));
  }
  return Status::Ok();
}

Status Comm::BrokenLocked(CollOp op) const {
  if (!broken_) return Status::Ok();
  return Aborted(fmt::format("{} on rank {}: communicator unusable after an earlier failure: {}", CollOpName(op), rank(),
                             broken_msg_));
}

Status Comm::UnusableLocked(CollOp op) const {
  ZINF_RETURN_IF_ERROR(BrokenLocked(op));
  if (stop_) return Aborted(fmt::format("{}: communicator is shutting down", CollOpName(op)));
  return Status::Ok();
}

void Comm::FinishLocked(const Status& st) {
  if (st.code() == Code::kAborted && !broken_) {
    broken_ = true;
    broken_msg_ = st.message();
  }
}

CommHandle Comm::Enqueue(const CollArgs& in) {
  CollArgs args = in;
  if (args.op != CollOp::kBarrier && args.count == 0) return CommHandle::Done(Status::Ok());
  if (Status st = Check(args); !st.ok()) return CommHandle::Done(std::move(st));
  auto state = std::make_shared<detail::CommOpState>();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (Status st = UnusableLocked(args.op); !st.ok()) return CommHandle::Done(std::move(st));
    args.timeout_s = timeout_s_;
    queue_.push_back(Task{args, state});
    ++issued_;
  }
  cv_.notify_one();
  return CommHandle(std::move(state));
}

Status Comm::Run(const CollArgs& in) {
  CollArgs args = in;
  if (args.op != CollOp::kBarrier && args.count == 0) return Status::Ok();
  if (Status st = Check(args); !st.ok()) return st;
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (!queue_.empty() || worker_busy_ || inline_busy_) {
      lock.unlock();  // ops are in flight: this one runs after them, on the comm thread
      return Enqueue(args).Wait();
    }
    if (Status st = UnusableLocked(args.op); !st.ok()) return st;
    args.timeout_s = timeout_s_;
    inline_busy_ = true;  // the comm thread holds back ops issued meanwhile (issue order)
    ++issued_;
  }
  Status st = Execute(args);
  bool held_back = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    inline_busy_ = false;
    FinishLocked(st);
    held_back = !queue_.empty() || stop_;
  }
  if (held_back) cv_.notify_all();  // only then does the comm thread need waking (a wake-up costs a context switch)
  return st;
}

int64_t Comm::issued() const {
  std::lock_guard<std::mutex> lock(mu_);
  return issued_;
}

void Comm::WorkerLoop() {
  SetThreadName("comm");
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return (stop_ && queue_.empty()) || (!queue_.empty() && !inline_busy_); });
    if (queue_.empty()) return;  // stopping, queue drained
    Task task = std::move(queue_.front());
    queue_.pop_front();
    Status st = BrokenLocked(task.args.op);  // ops queued before a stop still run
    worker_busy_ = true;
    lock.unlock();
    if (st.ok()) st = Execute(task.args);
    lock.lock();
    worker_busy_ = false;
    FinishLocked(st);
    {
      std::lock_guard<std::mutex> slock(task.state->mu);
      task.state->done = true;
      task.state->status = std::move(st);
    }
    task.state->cv.notify_all();
  }
}

CommHandle Comm::AllGatherAsync(const float* send, size_t count, float* recv) {
  return Enqueue({CollOp::kAllGather, CommDType::kF32, send, recv, count, 0, 0});
}
CommHandle Comm::AllGatherBytesAsync(const void* send, size_t bytes, void* recv) {
  return Enqueue({CollOp::kAllGather, CommDType::kBytes, send, recv, bytes, 0, 0});
}
CommHandle Comm::ReduceScatterAsync(const float* send, size_t count, float* recv) {
  return Enqueue({CollOp::kReduceScatter, CommDType::kF32, send, recv, count, 0, 0});
}
CommHandle Comm::AllReduceAsync(float* data, size_t count) {
  return Enqueue({CollOp::kAllReduce, CommDType::kF32, data, data, count, 0, 0});
}
CommHandle Comm::BroadcastAsync(float* data, size_t count, int root) {
  return Enqueue({CollOp::kBroadcast, CommDType::kF32, data, data, count, root, 0});
}
CommHandle Comm::BroadcastBytesAsync(void* data, size_t bytes, int root) {
  return Enqueue({CollOp::kBroadcast, CommDType::kBytes, data, data, bytes, root, 0});
}
CommHandle Comm::BarrierAsync() { return Enqueue({CollOp::kBarrier, CommDType::kBytes, nullptr, nullptr, 0, 0, 0}); }

namespace {
constexpr size_t kSumBlock = 2048;

template <typename PartFn>
void SumBlocks(PartFn part, int n, size_t count, float* out) {
  float acc[kSumBlock];
  for (size_t b = 0; b < count; b += kSumBlock) {
    size_t m = std::min(kSumBlock, count - b);
    std::memcpy(acc, part(0) + b, m * sizeof(float));
    for (int q = 1; q < n; ++q) {
      const float* p = part(q) + b;
      for (size_t i = 0; i < m; ++i) acc[i] += p[i];
    }
    std::memcpy(out + b, acc, m * sizeof(float));  // after all reads: out may alias a part
  }
}
}  // namespace

void SumInRankOrder(const float* const* parts, int n, size_t count, float* out) {
  SumBlocks([parts](int q) { return parts[q]; }, n, count, out);
}

void SumInRankOrder(const float* base, size_t stride_elems, int n, size_t count, float* out) {
  SumBlocks([=](int q) { return base + static_cast<size_t>(q) * stride_elems; }, n, count, out);
}

}  // namespace zinf
