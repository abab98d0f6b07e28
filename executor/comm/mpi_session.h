// MpiSession: RAII MPI initialisation for a process (zrun under mpirun, MPI tests).
//
// Thread model (see comm.h): MPI is initialised with MPI_THREAD_SERIALIZED. zinf never
// calls MPI concurrently: every MPI call in executor/comm is made while holding
// MpiMutex(), one call at a time (comm threads release it between MPI_Test polls), so
// several MpiComms and the main thread may coexist. Code elsewhere that calls MPI
// directly (e.g. an NCCL bootstrap) must hold MpiMutex() around each call as well, or
// better use a Comm (BroadcastBytes) instead.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "core/status.h"

namespace zinf {

std::mutex& MpiMutex();

// MPI return code -> Status (IoError "what: MPI_ERR_x: <MPI error string>").
Status MpiError(int rc, std::string_view what);

class MpiSession {
 public:
  // Initialises MPI unless it already is (then this session will not finalize it) and
  // sets MPI_ERRORS_RETURN on MPI_COMM_WORLD. Unsupported if MPI_THREAD_SERIALIZED is
  // not provided.
  static Result<std::unique_ptr<MpiSession>> Init(int* argc, char*** argv);
  // Finalizes MPI if Init initialised it. Destroy every MpiComm first.
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int world_rank() const { return rank_; }
  int world_size() const { return size_; }
  int thread_level() const { return thread_level_; }
  // Tears down the whole job (MPI_Abort on MPI_COMM_WORLD); for unrecoverable comm errors
  // such as an Aborted (timed out) collective.
  [[noreturn]] static void Abort(int exit_code);

 private:
  MpiSession() = default;
  bool owns_ = false;
  int rank_ = 0, size_ = 1, thread_level_ = 0;
};

}  // namespace zinf
