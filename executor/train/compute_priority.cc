#include "executor/train/compute_priority.h"

#include <fmt/format.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <initializer_list>
#include <optional>
#include <cstdlib>
#include <cstring>

namespace zinf {

namespace {
// The first of `vars` whose value is an integer in [lo, hi]; others are skipped.
std::optional<long> FirstIntFromEnv(std::initializer_list<const char*> vars, long lo, long hi) {
  for (const char* var : vars) {
    const char* v = std::getenv(var);
    if (v == nullptr) continue;
    char* end = nullptr;
    const long n = std::strtol(v, &end, 10);
    if (end != v && *end == '\0' && n >= lo && n <= hi) return n;
  }
  return std::nullopt;
}

// The CPUs the calling thread may run on; nullopt when the kernel will not say.
std::optional<cpu_set_t> CallingThreadAffinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return std::nullopt;
  return set;
}
}  // namespace

int DefaultComputeNice(int ranks_on_node, int cores) {
  return cores > 0 && ranks_on_node > cores ? kOversubscribedComputeNice : 0;
}

int RanksOnThisNode(int world_size) {
  const auto n = FirstIntFromEnv({"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE"}, 1, world_size);
  return n ? static_cast<int>(*n) : world_size;
}

int LocalRank(int world_rank) {
  const auto n = FirstIntFromEnv({"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"}, 0, INT_MAX);
  return n ? static_cast<int>(*n) : world_rank;
}

int AllowedCpuCount() {
  const std::optional<cpu_set_t> set = CallingThreadAffinity();
  if (set && CPU_COUNT(&*set) > 0) return CPU_COUNT(&*set);
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? static_cast<int>(online) : 1;
}

bool ThreadAffinityIsUnrestricted() {
  const std::optional<cpu_set_t> set = CallingThreadAffinity();
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  return set && online > 0 && CPU_COUNT(&*set) >= online;
}

Status BindThreadToCpu(int index) {
  const std::optional<cpu_set_t> got = CallingThreadAffinity();
  if (!got) return Internal(fmt::format("sched_getaffinity: {}", std::strerror(errno)));
  const cpu_set_t& allowed = *got;
  const int n = CPU_COUNT(&allowed);
  if (n <= 0) return Internal("sched_getaffinity: no CPU allowed");
  int want = ((index % n) + n) % n;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed)) continue;
    if (want-- > 0) continue;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (sched_setaffinity(0, sizeof(one), &one) != 0)  // 0: the calling thread
      return Internal(fmt::format("sched_setaffinity(cpu {}): {}", cpu, std::strerror(errno)));
    return Status::Ok();
  }
  return Internal("sched_getaffinity: CPU set shorter than its count");
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
