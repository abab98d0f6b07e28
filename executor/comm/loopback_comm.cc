#include "executor/comm/loopback_comm.h"

#include <cstring>

namespace zinf {

Status LoopbackComm::Execute(const CollArgs& a) {
  if ((a.op == CollOp::kAllGather || a.op == CollOp::kReduceScatter) && a.send != a.recv) {
    std::memmove(a.recv, a.send, a.count * DTypeBytes(a.dtype));
  }
  return Status::Ok();  // allreduce, broadcast, barrier: nothing to do with one rank
}

}  // namespace zinf
