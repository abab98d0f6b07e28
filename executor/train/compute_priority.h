// The compute thread's scheduling priority on the CPU backend.
//
// On the CPU backend the "device" is the CPU: when a node runs more ranks than it has
// cores, each rank's compute thread is always runnable, and a rank's communication worker
// (which must poll MPI to progress a collective; MPI has no progress of its own) or I/O
// worker waits behind other ranks' compute for a scheduler slice (1.5-3 ms) at every
// step of every collective. Measured on 2 cores, 4 processes, each with a busy compute
// thread: a 4 KiB-per-rank MPI allgather took 7.9 ms; with the compute threads at nice 10,
// 0.8 ms; idle, 0.04 ms. A GPU's copy engines and NICs do not wait for its SMs either, so
// zrun lowers the compute thread's priority there: the workers are mostly asleep and take
// little from compute, but run as soon as they wake.
#pragma once

#include "core/status.h"

namespace zinf {

// Nice value zrun gives its compute thread by default: kOversubscribedComputeNice when
// ranks_on_node > cores, else 0 (nothing changes).
inline constexpr int kOversubscribedComputeNice = 10;
int DefaultComputeNice(int ranks_on_node, int cores);

// Ranks on this node: the launcher's local size (OMPI_COMM_WORLD_LOCAL_SIZE, MPI_LOCALNRANKS,
// SLURM_NTASKS_PER_NODE) when it gives one, else all `world_size` ranks.
int RanksOnThisNode(int world_size);

// This rank's index among the ranks on its node: the launcher's local rank
// (OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID) when it gives one, else
// `world_rank`.
int LocalRank(int world_rank);

// How many CPUs the calling thread may run on (its affinity mask; the online count when the
// kernel will not say).
int AllowedCpuCount();

// Whether the calling thread may run on every online CPU (no launcher or user bound it).
bool ThreadAffinityIsUnrestricted();

// Binds the calling thread to one CPU, the `index % n`-th of the n it may run on now (threads
// it creates later inherit the binding). Errors: Internal when the kernel refuses (naming errno).
// With more ranks than cores, each rank bound to a core of its own keeps its threads' caches
// and spares the scheduler's migrations: on a 2-core VM 4 bound ranks ran small-none-r4 and
// small-nvme-ckhost-r4 ~13% faster a step than unbound ones, and left the cores idle 1-3% of
// the time instead of 6-10% in medium-opthost-ck-r4 (three alternating pairs each).
Status BindThreadToCpu(int index);

// Sets the calling thread's nice value (threads it creates later inherit it; threads that
// already exist keep theirs). nice in [0, 19]; 0 leaves the thread as it is. Errors:
// InvalidArgument out of range; Internal when the kernel refuses (naming errno).
Status SetThreadNice(int nice);

}  // namespace zinf
