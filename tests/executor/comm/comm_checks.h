// Collective checks against serial references, shared by the ThreadComm, Loopback and
// MPI tests. Each runs on every rank of a Comm (collectively) and returns a Status
// naming the rank, op, count and first wrong element. Every rank can generate every
// rank's input (RankData), so the reference is computed locally with a plain
// rank-order loop and compared bit for bit.
#pragma once

#include <cstddef>
#include <vector>

#include "executor/comm/comm.h"

namespace zinf::commtest {

// Values of widely varying magnitude, so that any other summation order shows.
std::vector<float> RankData(int rank, size_t count, unsigned salt);

Status CheckAllGather(Comm& c, size_t count, bool in_place);
Status CheckAllGatherBytes(Comm& c, size_t bytes);
Status CheckReduceScatter(Comm& c, size_t count, bool in_place);
Status CheckAllReduce(Comm& c, size_t count);
Status CheckBroadcast(Comm& c, size_t count, int root);
Status CheckZeroCounts(Comm& c);
Status CheckArgumentErrors(Comm& c);
// Four async collectives in flight at once while the caller computes; waited in reverse.
Status CheckAsyncOverlap(Comm& c, size_t count);
Status CheckProbe(Comm& c);

// All of the above over odd, even and large counts.
Status RunAllChecks(Comm& c);

}  // namespace zinf::commtest
