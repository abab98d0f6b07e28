#include "executor/comm/mpi_session.h"

#include <fmt/format.h>
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1  // C bindings only
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <cstdlib>

namespace zinf {

std::mutex& MpiMutex() {
  static std::mutex mu;
  return mu;
}

Status MpiError(int rc, std::string_view what) {
  char msg[MPI_MAX_ERROR_STRING] = {0};
  int len = 0, cls = 0;
  if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) {
    std::snprintf(msg, sizeof(msg), "MPI error %d", rc);
  }
  MPI_Error_class(rc, &cls);
  return IoError(fmt::format("{}: MPI error class {}: {}", what, cls, msg));
}

Result<std::unique_ptr<MpiSession>> MpiSession::Init(int* argc, char*** argv) {
  std::lock_guard<std::mutex> lock(MpiMutex());
  std::unique_ptr<MpiSession> s(new MpiSession());
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int rc = MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &s->thread_level_);
    if (rc != MPI_SUCCESS) return MpiError(rc, "MPI_Init_thread");
    s->owns_ = true;
  } else {
    MPI_Query_thread(&s->thread_level_);
  }
  if (s->thread_level_ < MPI_THREAD_SERIALIZED) {
    return Unsupported(fmt::format("MPI provides thread level {} < MPI_THREAD_SERIALIZED; zinf's comm "
                                   "thread needs at least SERIALIZED", s->thread_level_));
  }
  int rc = MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (rc != MPI_SUCCESS) return MpiError(rc, "MPI_Comm_set_errhandler(MPI_COMM_WORLD)");
  MPI_Comm_rank(MPI_COMM_WORLD, &s->rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &s->size_);
  return s;
}

MpiSession::~MpiSession() {
  if (!owns_) return;
  std::lock_guard<std::mutex> lock(MpiMutex());
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

void MpiSession::Abort(int exit_code) {
  MPI_Abort(MPI_COMM_WORLD, exit_code);  // no lock: may be called from anywhere, ends the job
  std::_Exit(exit_code);
}

}  // namespace zinf
