// Collective bandwidth probe (nccl-tests definitions), called by the profiler.
//
//   bytes  = the op's full buffer: allgather the gathered output (size * per-rank),
//            reduce_scatter the full input (size * per-rank), allreduce/broadcast the
//            vector. Rounded down to whole fp32 elements (and for allgather /
//            reduce_scatter to a multiple of size * 4); the bytes actually used are
//            reported.
//   time_s = mean time per op over `iters` (after `warmup` untimed ops), the maximum
//            over ranks (every rank returns the same numbers).
//   algbw  = bytes / time_s
//   busbw  = algbw * (n-1)/n     allgather, reduce_scatter
//            algbw * 2(n-1)/n    allreduce
//            algbw               broadcast
// GB/s here are decimal (1e9 bytes/s), as nccl-tests prints them. Collective: every rank
// of the Comm must call it with the same arguments.
#pragma once

#include <cstdint>

#include "core/status.h"
#include "executor/comm/comm.h"

namespace zinf {

struct CollMeasurement {
  CollOp op;
  int ranks = 1;
  uint64_t bytes = 0;  // as used (see above)
  int iters = 0;
  double time_s = 0;
  double algbw_gbps = 0;
  double busbw_gbps = 0;
};

// busbw / algbw for an op on n ranks (0 for barrier).
double BusBandwidthFactor(CollOp op, int n);

// Errors: InvalidArgument for barrier, iters < 1 or a size too small for one element per
// rank; any comm failure.
Result<CollMeasurement> MeasureCollective(Comm& comm, CollOp op, uint64_t bytes, int iters, int warmup = 1);

}  // namespace zinf
