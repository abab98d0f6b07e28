// zinf::Comm: the collectives ZeRO-3 needs, on host buffers.
//
//   AllGather(send, count, recv)        recv[size*count]: rank q's send at recv + q*count
//   ReduceScatter(send, count, recv)    send[size*count]; rank r gets the sum of every
//                                       rank's send[r*count, (r+1)*count)
//   AllReduce(data, count)              in place, sum
//   Broadcast(data, count, root)        root's data to every rank
//   Barrier()
// fp32 for all; raw bytes for AllGatherBytes / BroadcastBytes.
//
// DETERMINISM: every sum is computed element-wise in rank order,
//   out = ((x_0 + x_1) + x_2) + ... + x_{n-1}
// by exactly one rank per element (the rank owning that block) and then copied, so
// ReduceScatter / AllReduce results are bitwise identical on every rank and from run to
// run for the same inputs and rank count, whatever the implementation (ThreadComm and
// MpiComm agree bit for bit, and a serial loop in rank order reproduces them).
//
// THREADING: each Comm owns one dedicated comm thread. Async collectives are queued to it
// and executed in issue order. A blocking call runs on the calling thread when nothing is
// queued or running (it saves two thread hand-offs per op, which on a small or virtualised
// machine cost more CPU than a small collective's copies), otherwise it is queued behind
// the ops in flight and waited; the comm thread holds back ops issued while a blocking call
// runs. So ops never run concurrently (MPI_THREAD_SERIALIZED is enough) and run in program
// order on every rank. Calls on one Comm may come from any thread, but all ranks must
// issue the same collectives in the same order (as with MPI). Buffers must stay valid
// (send unmodified) until the handle is waited.
//
// FAILURE: each op has a deadline (timeout_s, default 600 s; <= 0 = none). An op that
// does not complete in time (a peer died, hung or skipped the call) fails with Aborted
// naming the op and the rank; the Comm is then broken and every later op fails Aborted at
// once. Zero-count ops complete immediately without communicating. In-place use: send
// may alias recv + rank*count (AllGather) and recv may alias send + rank*count
// (ReduceScatter).
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "core/status.h"

namespace zinf {

enum class CollOp : uint8_t { kAllGather, kReduceScatter, kAllReduce, kBroadcast, kBarrier };
const char* CollOpName(CollOp op);  // "allgather", "reduce_scatter", ...

enum class CommDType : uint8_t { kF32, kBytes };
inline size_t DTypeBytes(CommDType t) { return t == CommDType::kF32 ? 4 : 1; }

struct CommOptions {
  double timeout_s = 600;  // per-op deadline on the comm thread; <= 0: wait forever
};

namespace detail {
struct CommOpState {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  Status status;
};
}  // namespace detail

// Completion handle of an async collective. Copyable; an empty handle is complete (OK).
class CommHandle {
 public:
  CommHandle() = default;
  explicit CommHandle(std::shared_ptr<detail::CommOpState> s) : state_(std::move(s)) {}
  static CommHandle Done(Status st);
  Status Wait() const;   // blocks until done; may be called repeatedly
  bool Test() const;     // true when done
 private:
  std::shared_ptr<detail::CommOpState> state_;
};

// Arguments of one collective, as executed on the comm thread.
struct CollArgs {
  CollOp op;
  CommDType dtype;
  const void* send;  // AllGather/ReduceScatter input
  void* recv;        // output; AllReduce/Broadcast: the in-place buffer
  size_t count;      // elements (per rank for AllGather/ReduceScatter)
  int root;
  double timeout_s;
};

class Comm {
 public:
  virtual ~Comm();
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string name() const = 0;  // "mpi", "thread", "loopback"

  CommHandle AllGatherAsync(const float* send, size_t count, float* recv);
  CommHandle AllGatherBytesAsync(const void* send, size_t bytes, void* recv);
  CommHandle ReduceScatterAsync(const float* send, size_t count, float* recv);
  CommHandle AllReduceAsync(float* data, size_t count);
  CommHandle BroadcastAsync(float* data, size_t count, int root);
  CommHandle BroadcastBytesAsync(void* data, size_t bytes, int root);
  CommHandle BarrierAsync();

  Status AllGather(const float* send, size_t count, float* recv) {
    return Run({CollOp::kAllGather, CommDType::kF32, send, recv, count, 0, 0});
  }
  Status AllGatherBytes(const void* send, size_t bytes, void* recv) {
    return Run({CollOp::kAllGather, CommDType::kBytes, send, recv, bytes, 0, 0});
  }
  Status ReduceScatter(const float* send, size_t count, float* recv) {
    return Run({CollOp::kReduceScatter, CommDType::kF32, send, recv, count, 0, 0});
  }
  Status AllReduce(float* data, size_t count) {
    return Run({CollOp::kAllReduce, CommDType::kF32, data, data, count, 0, 0});
  }
  Status Broadcast(float* data, size_t count, int root) {
    return Run({CollOp::kBroadcast, CommDType::kF32, data, data, count, root, 0});
  }
  Status BroadcastBytes(void* data, size_t bytes, int root) {
    return Run({CollOp::kBroadcast, CommDType::kBytes, data, data, bytes, root, 0});
  }
  Status Barrier() { return Run({CollOp::kBarrier, CommDType::kBytes, nullptr, nullptr, 0, 0, 0}); }

  double timeout_s() const;
  void set_timeout_s(double timeout_s);  // applies to ops issued afterwards
  bool broken() const;
  int64_t issued() const;  // collectives issued so far (zero-count ops excluded)

 protected:
  explicit Comm(const CommOptions& options);
  // Runs one collective on the comm thread, in issue order. count > 0 (except Barrier).
  virtual Status Execute(const CollArgs& args) = 0;
  // Final classes call this first in their destructor: runs the queued ops and joins the
  // comm thread (so Execute never runs on a half-destroyed object).
  void StopWorker();

 private:
  struct Task {
    CollArgs args;
    std::shared_ptr<detail::CommOpState> state;
  };
  CommHandle Enqueue(const CollArgs& args);
  Status Run(const CollArgs& args);  // a blocking op: inline when the comm thread is idle
  Status Check(const CollArgs& args) const;
  Status BrokenLocked(CollOp op) const;
  Status UnusableLocked(CollOp op) const;  // broken or stopping
  void FinishLocked(const Status& st);     // an Aborted op breaks the Comm
  void WorkerLoop();

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Task> queue_;
  bool stop_ = false;
  bool worker_busy_ = false, inline_busy_ = false;
  int64_t issued_ = 0;
  bool broken_ = false;
  std::string broken_msg_;
  double timeout_s_;
  std::thread worker_;
};

// Block q of `count` elements split over n ranks as evenly as possible (the first
// count % n blocks get one extra element). AllReduce reduces block q on rank q.
inline size_t BlockBegin(size_t count, int n, int q) {
  size_t nn = static_cast<size_t>(n), qq = static_cast<size_t>(q);
  return qq * (count / nn) + std::min(qq, count % nn);
}
inline size_t BlockSize(size_t count, int n, int q) {
  return count / static_cast<size_t>(n) + (static_cast<size_t>(q) < count % static_cast<size_t>(n) ? 1 : 0);
}

// out[i] = ((parts[0][i] + parts[1][i]) + ...) + parts[n-1][i], with part q at
// base + q*stride_elems. The one reduction every Comm uses (see DETERMINISM above).
void SumInRankOrder(const float* base, size_t stride_elems, int n, size_t count, float* out);
// Same with an explicit pointer per part.
void SumInRankOrder(const float* const* parts, int n, size_t count, float* out);

}  // namespace zinf
