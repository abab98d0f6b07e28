#include "executor/comm/mpi_comm.h"

#include <fmt/format.h>

#include <chrono>
#include <climits>
#include <thread>

#include "executor/comm/mpi_session.h"

namespace zinf {

namespace {
using Clock = std::chrono::steady_clock;

// Runs one MPI call under the process-wide MPI mutex.
template <typename F>
int Locked(F&& f) {
  std::lock_guard<std::mutex> lock(MpiMutex());
  return f();
}

MPI_Datatype TypeOf(CommDType t) { return t == CommDType::kF32 ? MPI_FLOAT : MPI_BYTE; }

std::string What(const char* call, const CollArgs& a, int rank, int size) {
  return fmt::format("{} ({} of {} elements, rank {} of {})", call, CollOpName(a.op), a.count, rank, size);
}
}  // namespace

#define ZINF_MPI_CALL(call, expr)                                       \
  do {                                                                  \
    int zinf_mpi_rc_ = Locked([&] { return (expr); });                 \
    if (zinf_mpi_rc_ != MPI_SUCCESS) return MpiError(zinf_mpi_rc_, What(call, a, rank_, size_)); \
  } while (0)

MpiComm::MpiComm(MPI_Comm comm, int rank, int size, const CommOptions& options)
    : Comm(options), comm_(comm), rank_(rank), size_(size) {
  counts_.resize(static_cast<size_t>(size));
  displs_.resize(static_cast<size_t>(size));
  rcounts_.resize(static_cast<size_t>(size));
  rdispls_.resize(static_cast<size_t>(size));
}

Result<std::unique_ptr<MpiComm>> MpiComm::Create(const CommOptions& options) {
  std::lock_guard<std::mutex> lock(MpiMutex());
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) return InvalidArgument("MpiComm: MPI is not initialised (create an MpiSession first)");
  MPI_Comm comm;
  int rc = MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  if (rc != MPI_SUCCESS) return MpiError(rc, "MPI_Comm_dup(MPI_COMM_WORLD)");
  rc = MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  if (rc != MPI_SUCCESS) return MpiError(rc, "MPI_Comm_set_errhandler");
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  return std::unique_ptr<MpiComm>(new MpiComm(comm, rank, size, options));
}

MpiComm::~MpiComm() {
  StopWorker();
  std::lock_guard<std::mutex> lock(MpiMutex());
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  // Give timed-out requests a last chance (late peers may have caught up since); only
  // after an Aborted op, so a normal destruction does not wait.
  auto deadline = Clock::now() + std::chrono::seconds(5);
  bool all_done = true;
  for (MPI_Request& req : stale_) {
    int flag = req == MPI_REQUEST_NULL ? 1 : 0;
    while (req != MPI_REQUEST_NULL && MPI_Test(&req, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && !flag &&
           Clock::now() < deadline) {
    }
    if (!flag) all_done = false;
  }
  if (all_done) MPI_Comm_free(&comm_);  // else leak it: freeing with active requests is erroneous
}

float* MpiComm::Scratch(size_t elems) {
  if (scratch_.size() < elems) scratch_.resize(elems);
  return scratch_.data();
}

Status MpiComm::Complete(MPI_Request req, const CollArgs& a, const char* call) {
  const bool has_deadline = a.timeout_s > 0;
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(has_deadline ? a.timeout_s : 0));
  for (uint64_t polls = 0;; ++polls) {
    int flag = 0;
    int rc = Locked([&] { return MPI_Test(&req, &flag, MPI_STATUS_IGNORE); });
    if (rc != MPI_SUCCESS) return MpiError(rc, What(call, a, rank_, size_));
    if (flag) return Status::Ok();
    auto now = Clock::now();
    if (has_deadline && now >= deadline) {
      stale_.push_back(req);
      return Aborted(fmt::format("{}: not complete after {} s; a peer rank may have died, hung or skipped this "
                                 "collective",
                                 What(call, a, rank_, size_), a.timeout_s));
    }
    // Spin briefly for latency, then yield the core (ranks are often oversubscribed), then nap.
    if (polls < 64) continue;
    if (now - start < std::chrono::milliseconds(2)) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
}

Status MpiComm::Execute(const CollArgs& a) {
  if (a.count > static_cast<size_t>(INT_MAX)) {
    return InvalidArgument(fmt::format("MpiComm {}: count {} exceeds INT_MAX; split the call", CollOpName(a.op), a.count));
  }
  const int count = static_cast<int>(a.count);
  const MPI_Datatype type = TypeOf(a.dtype);
  const size_t n = static_cast<size_t>(size_);
  MPI_Request req = MPI_REQUEST_NULL;
  switch (a.op) {
    case CollOp::kAllGather: {
      const size_t bytes = a.count * DTypeBytes(a.dtype);
      const bool in_place = a.send == static_cast<const char*>(a.recv) + static_cast<size_t>(rank_) * bytes;
      ZINF_MPI_CALL("MPI_Iallgather", MPI_Iallgather(in_place ? MPI_IN_PLACE : a.send, count, type, a.recv, count,
                                                     type, comm_, &req));
      return Complete(req, a, "MPI_Iallgather");
    }
    case CollOp::kReduceScatter: {
      float* gathered = Scratch(n * a.count);  // [q][count]: rank q's block for this rank
      ZINF_MPI_CALL("MPI_Ialltoall",
                    MPI_Ialltoall(a.send, count, MPI_FLOAT, gathered, count, MPI_FLOAT, comm_, &req));
      ZINF_RETURN_IF_ERROR(Complete(req, a, "MPI_Ialltoall"));
      SumInRankOrder(gathered, a.count, size_, a.count, static_cast<float*>(a.recv));
      return Status::Ok();
    }
    case CollOp::kAllReduce: {
      float* data = static_cast<float*>(a.recv);
      const size_t mine = BlockSize(a.count, size_, rank_);
      for (int q = 0; q < size_; ++q) {
        counts_[static_cast<size_t>(q)] = static_cast<int>(BlockSize(a.count, size_, q));
        displs_[static_cast<size_t>(q)] = static_cast<int>(BlockBegin(a.count, size_, q));
        rcounts_[static_cast<size_t>(q)] = static_cast<int>(mine);
        rdispls_[static_cast<size_t>(q)] = static_cast<int>(static_cast<size_t>(q) * mine);
      }
      float* gathered = Scratch(n * mine + 1);
      ZINF_MPI_CALL("MPI_Ialltoallv", MPI_Ialltoallv(data, counts_.data(), displs_.data(), MPI_FLOAT, gathered,
                                                     rcounts_.data(), rdispls_.data(), MPI_FLOAT, comm_, &req));
      ZINF_RETURN_IF_ERROR(Complete(req, a, "MPI_Ialltoallv"));
      SumInRankOrder(gathered, mine, size_, mine, data + BlockBegin(a.count, size_, rank_));
      ZINF_MPI_CALL("MPI_Iallgatherv", MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, data, counts_.data(),
                                                       displs_.data(), MPI_FLOAT, comm_, &req));
      return Complete(req, a, "MPI_Iallgatherv");
    }
    case CollOp::kBroadcast:
      ZINF_MPI_CALL("MPI_Ibcast", MPI_Ibcast(a.recv, count, type, a.root, comm_, &req));
      return Complete(req, a, "MPI_Ibcast");
    case CollOp::kBarrier:
      ZINF_MPI_CALL("MPI_Ibarrier", MPI_Ibarrier(comm_, &req));
      return Complete(req, a, "MPI_Ibarrier");
  }
  return Internal("MpiComm: unknown collective");
}

}  // namespace zinf
