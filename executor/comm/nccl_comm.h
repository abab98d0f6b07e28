// NcclComm: zinf::Comm over NCCL on DEVICE buffers (CUDA builds with NCCL only:
// ZINF_HAVE_NCCL). Every pointer passed to its collectives must be device memory on this
// rank's GPU (e.g. a CudaBackend arena allocation); counts as in comm.h.
//
// Bootstrap (Create): one rank per GPU. The device is cudaSetDevice(local rank modulo the
// device count), the local rank from OMPI_COMM_WORLD_LOCAL_RANK (or MPI_LOCALRANKID,
// SLURM_LOCALID); rank 0 calls ncclGetUniqueId, MPI_Bcast over MPI_COMM_WORLD (under
// MpiMutex(), so it coexists with MpiComm; needs a live MpiSession), then
// ncclCommInitRank. Create blocks until every rank joined (NOT covered by the timeout).
//
// Execution: ops run in issue order on the Comm thread (comm.h THREADING) on a private
// non-blocking cudaStream of this comm; each op is enqueued (ncclAllGather,
// ncclReduceScatter, ncclAllReduce sum, ncclBroadcast; Barrier = a 1-float allreduce) and
// then polled (cudaStreamQuery + ncclCommGetAsyncError) until it completes, so when its
// handle is done the result is in device memory and visible to every stream. ORDERING
// with other streams: inputs must be complete when the op is issued (synchronize the
// stream or event that produced them first); the comm does not wait on backend streams.
//
// FAILURE (comm.h): past the op's deadline, or on an asynchronous NCCL error, the
// communicator is aborted (ncclCommAbort) and the op fails Aborted naming op and rank;
// later ops fail Aborted at once (Comm base class).
//
// DETERMINISM: comm.h's bitwise guarantees (rank-order sums, identical results to
// MpiComm / ThreadComm) do NOT hold for NCCL. NCCL's ring / tree algorithms sum in an
// order that depends on the algorithm, protocol, topology and rank count; results are
// identical on every rank for allreduce and reproducible run to run for a fixed
// configuration and NCCL version in practice, but differ in the last bits from the
// rank-order sum. Compare against references with a tolerance.
#pragma once

#include <memory>
#include <string>

#include "executor/comm/comm.h"

namespace zinf {

struct NcclCommOptions : CommOptions {
  int device = -1;  // -1: local rank modulo device count
};

class NcclComm : public Comm {
 public:
  // Collective over MPI_COMM_WORLD (every rank must call it).
  static Result<std::unique_ptr<NcclComm>> Create(const NcclCommOptions& options = {});
  ~NcclComm() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string name() const override { return "nccl"; }
  int device() const { return device_; }

 protected:
  Status Execute(const CollArgs& args) override;

 private:
  struct Impl;
  NcclComm(std::unique_ptr<Impl> impl, int rank, int size, int device, const CommOptions& o);
  std::unique_ptr<Impl> impl_;
  int rank_, size_, device_;
};

}  // namespace zinf
