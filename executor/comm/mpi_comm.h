// MpiComm: Comm over MPI (host buffers), on a private duplicate of MPI_COMM_WORLD with
// MPI_ERRORS_RETURN. Needs a live MpiSession (destroy the MpiComm before it).
//
// Every op is a nonblocking MPI collective polled with MPI_Test (holding MpiMutex() for
// each call, yielding between polls) until done or until its deadline, so a dead or hung
// peer gives Aborted instead of a hang:
//   allgather      MPI_Iallgather (MPI_IN_PLACE when send aliases recv's own block)
//   reduce_scatter MPI_Ialltoall of the blocks, then a rank-order sum (deterministic)
//   allreduce      MPI_Ialltoallv of block q to rank q, rank-order sum of its block,
//                  MPI_Iallgatherv (in place) of the reduced blocks
//   broadcast      MPI_Ibcast;  barrier  MPI_Ibarrier
// Covered by the timeout: peers that hang, deadlock or never enter the collective, and a
// peer that died when the MPI library does not tear the job down itself (mpirun usually
// kills the remaining ranks first). Not covered: a blocked MPI_Comm_dup in Create, and
// recovery - MPI cannot cancel a started collective, so after Aborted the MpiComm is
// broken (later ops fail at once) and the job should end (MpiSession::Abort).
// Limits: per-op counts up to INT_MAX elements.
#pragma once

#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1  // C bindings only
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <memory>
#include <vector>

#include "executor/comm/comm.h"

namespace zinf {

class MpiComm : public Comm {
 public:
  // Collective over MPI_COMM_WORLD (MPI_Comm_dup).
  static Result<std::unique_ptr<MpiComm>> Create(const CommOptions& options = {});
  ~MpiComm() override;
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string name() const override { return "mpi"; }

 protected:
  Status Execute(const CollArgs& args) override;

 private:
  MpiComm(MPI_Comm comm, int rank, int size, const CommOptions& options);
  // Polls `req` to completion or the deadline (then the request is kept as stale).
  Status Complete(MPI_Request req, const CollArgs& a, const char* call);
  float* Scratch(size_t elems);

  MPI_Comm comm_;
  int rank_, size_;
  std::vector<float> scratch_;
  std::vector<int> counts_, displs_, rcounts_, rdispls_;
  std::vector<MPI_Request> stale_;  // timed-out requests (cannot be cancelled)
};

}  // namespace zinf
