#include "executor/comm/thread_comm.h"

#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <thread>

namespace zinf {

namespace detail {

struct ThreadRendezvous {
  explicit ThreadRendezvous(int size)
      : n(size), arrivals(static_cast<size_t>(size), 0), posted(static_cast<size_t>(size)),
        scratch(static_cast<size_t>(size)) {}

  // Generation barrier with a deadline. On timeout the group is broken for everyone.
  Status Arrive(int rank, double timeout_s, const CollArgs& a) {
    std::unique_lock<std::mutex> lock(mu);
    if (broken) return Aborted(broken_msg);
    uint64_t gen = generation;
    uint64_t mine = ++arrivals[static_cast<size_t>(rank)];
    if (++arrived == n) {
      arrived = 0;
      ++generation;
      cv.notify_all();
      return Status::Ok();
    }
    auto pred = [&] { return generation != gen || broken; };
    if (timeout_s <= 0) {
      cv.wait(lock, pred);
    } else if (!cv.wait_for(lock, std::chrono::duration<double>(timeout_s), pred)) {
      std::string missing;
      for (int q = 0; q < n; ++q) {
        if (arrivals[static_cast<size_t>(q)] >= mine) continue;
        if (!missing.empty()) missing.push_back(',');
        missing.append(std::to_string(q));
      }
      broken = true;
      broken_msg = fmt::format("ThreadComm rank {} of {}: {} (count {}) timed out after {} s waiting for rank(s) {}",
                               rank, n, CollOpName(a.op), a.count, timeout_s, missing);
      cv.notify_all();
      return Aborted(broken_msg);
    }
    if (generation == gen) return Aborted(broken_msg);  // broken by another rank
    return Status::Ok();
  }

  // A rank's thread failed: its peers' waits end now (like MPI_Abort ending the job).
  void Break(const std::string& msg) {
    std::lock_guard<std::mutex> lock(mu);
    if (!broken) {
      broken = true;
      broken_msg = msg;
    }
    cv.notify_all();
  }

  int n;
  std::mutex mu;
  std::condition_variable cv;
  uint64_t generation = 0;
  int arrived = 0;
  std::vector<uint64_t> arrivals;  // barriers entered, per rank
  bool broken = false;
  std::string broken_msg;
  std::vector<CollArgs> posted;               // this op's arguments, per rank
  std::vector<std::vector<float>> scratch;    // AllReduce: rank q's reduced block
};

}  // namespace detail

namespace {
std::string Describe(const CollArgs& a) {
  return fmt::format("{}({} {} elements{})", CollOpName(a.op), a.dtype == CommDType::kF32 ? "f32" : "byte", a.count,
                     a.op == CollOp::kBroadcast ? fmt::format(", root {}", a.root) : "");
}
}  // namespace

ThreadComm::ThreadComm(std::shared_ptr<detail::ThreadRendezvous> shared, int rank, const CommOptions& options)
    : Comm(options), shared_(std::move(shared)), rank_(rank) {}

ThreadComm::~ThreadComm() { StopWorker(); }

int ThreadComm::size() const { return shared_->n; }

Status ThreadComm::Execute(const CollArgs& a) {
  detail::ThreadRendezvous& s = *shared_;
  const int n = s.n, r = rank_;
  s.posted[static_cast<size_t>(r)] = a;
  ZINF_RETURN_IF_ERROR(s.Arrive(r, a.timeout_s, a));
  for (int q = 0; q < n; ++q) {  // every rank sees the same mismatch
    const CollArgs& b = s.posted[static_cast<size_t>(q)];
    const CollArgs& f = s.posted[0];
    if (b.op != f.op || b.dtype != f.dtype || b.count != f.count || (f.op == CollOp::kBroadcast && b.root != f.root)) {
      Status mismatch = InvalidArgument(fmt::format("collective mismatch: rank 0 called {} but rank {} called {}",
                                                    Describe(f), q, Describe(b)));
      ZINF_RETURN_IF_ERROR(s.Arrive(r, a.timeout_s, a));
      return mismatch;
    }
  }
  const size_t es = DTypeBytes(a.dtype), bytes = a.count * es;
  switch (a.op) {
    case CollOp::kAllGather:
      for (int q = 0; q < n; ++q) {
        char* dst = static_cast<char*>(a.recv) + static_cast<size_t>(q) * bytes;
        const void* src = s.posted[static_cast<size_t>(q)].send;
        if (dst != src) std::memcpy(dst, src, bytes);
      }
      break;
    case CollOp::kReduceScatter: {
      std::vector<const float*> parts(static_cast<size_t>(n));
      for (int q = 0; q < n; ++q) {
        parts[static_cast<size_t>(q)] = static_cast<const float*>(s.posted[static_cast<size_t>(q)].send) +
                                        static_cast<size_t>(r) * a.count;
      }
      SumInRankOrder(parts.data(), n, a.count, static_cast<float*>(a.recv));
      break;
    }
    case CollOp::kAllReduce: {
      const size_t b0 = BlockBegin(a.count, n, r), bn = BlockSize(a.count, n, r);
      std::vector<float>& mine = s.scratch[static_cast<size_t>(r)];
      mine.resize(bn);
      std::vector<const float*> parts(static_cast<size_t>(n));
      for (int q = 0; q < n; ++q) {
        parts[static_cast<size_t>(q)] = static_cast<const float*>(s.posted[static_cast<size_t>(q)].recv) + b0;
      }
      SumInRankOrder(parts.data(), n, bn, mine.data());
      ZINF_RETURN_IF_ERROR(s.Arrive(r, a.timeout_s, a));  // all blocks reduced, inputs no longer read
      for (int q = 0; q < n; ++q) {
        const auto& blk = s.scratch[static_cast<size_t>(q)];
        if (!blk.empty()) {
          std::memcpy(static_cast<float*>(a.recv) + BlockBegin(a.count, n, q), blk.data(), blk.size() * sizeof(float));
        }
      }
      break;
    }
    case CollOp::kBroadcast:
      if (r != a.root) std::memcpy(a.recv, s.posted[static_cast<size_t>(a.root)].recv, bytes);
      break;
    case CollOp::kBarrier:
      // The first rendezvous was the barrier, but the final one is still needed: a rank
      // leaving early would post its next op while others still read `posted` above.
      break;
  }
  // Nobody may return (and reuse its buffers) before every rank is done reading them.
  return s.Arrive(r, a.timeout_s, a);
}

ThreadCommGroup::ThreadCommGroup(int size, const CommOptions& options)
    : shared_(std::make_shared<detail::ThreadRendezvous>(size < 1 ? 1 : size)) {
  for (int r = 0; r < shared_->n; ++r) comms_.push_back(std::make_unique<ThreadComm>(shared_, r, options));
}

ThreadCommGroup::~ThreadCommGroup() = default;

Status ThreadCommGroup::Run(const std::function<Status(Comm&)>& fn) {
  std::vector<Status> results(comms_.size());
  std::vector<std::thread> threads;
  for (size_t r = 0; r < comms_.size(); ++r) {
    threads.emplace_back([&, r] {
      results[r] = fn(*comms_[r]);
      if (!results[r].ok()) shared_->Break(fmt::format("rank {} failed: {}", r, results[r].ToString()));
    });
  }
  for (auto& t : threads) t.join();
  // The root cause first: a rank's own error before the Aborted its peers saw because of it.
  for (bool aborted_too : {false, true})
    for (size_t r = 0; r < results.size(); ++r)
      if (!results[r].ok() && (aborted_too || results[r].code() != Code::kAborted))
        return results[r].WithContext(fmt::format("rank {}", r));
  return Status::Ok();
}

}  // namespace zinf
