#include "executor/train/compute_priority.h"

#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace zinf {

int DefaultComputeNice(int ranks_on_node, int cores) {
  return cores > 0 && ranks_on_node > cores ? kOversubscribedComputeNice : 0;
}

int RanksOnThisNode(int world_size) {
  for (const char* var : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE"}) {
    const char* v = std::getenv(var);
    if (v == nullptr) continue;
    char* end = nullptr;
    const long n = std::strtol(v, &end, 10);
    if (end != v && *end == '\0' && n > 0 && n <= world_size) return static_cast<int>(n);
  }
  return world_size;
}

Status SetThreadNice(int nice) {
  if (nice < 0 || nice > 19) return InvalidArgument(fmt::format("compute nice {} is outside 0..19", nice));
  if (nice == 0) return Status::Ok();
  // On Linux, PRIO_PROCESS with a thread id sets that thread's nice value alone.
  const auto tid = static_cast<id_t>(syscall(SYS_gettid));
  if (setpriority(PRIO_PROCESS, tid, nice) != 0)
    return Internal(fmt::format("setpriority(thread {}, nice {}): {}", tid, nice, std::strerror(errno)));
  return Status::Ok();
}

}  // namespace zinf
