#include "executor/comm/coll_probe.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <vector>

namespace zinf {

double BusBandwidthFactor(CollOp op, int n) {
  const double nn = n;
  switch (op) {
    case CollOp::kAllGather:
    case CollOp::kReduceScatter: return (nn - 1) / nn;
    case CollOp::kAllReduce: return 2 * (nn - 1) / nn;
    case CollOp::kBroadcast: return 1;
    case CollOp::kBarrier: return 0;
  }
  return 0;
}

namespace {
Status RunOnce(Comm& comm, CollOp op, std::vector<float>& in, std::vector<float>& out, size_t per_rank) {
  switch (op) {
    case CollOp::kAllGather: return comm.AllGather(in.data(), per_rank, out.data());
    case CollOp::kReduceScatter: return comm.ReduceScatter(in.data(), per_rank, out.data());
    case CollOp::kAllReduce: return comm.AllReduce(in.data(), in.size());
    case CollOp::kBroadcast: return comm.Broadcast(in.data(), in.size(), 0);
    case CollOp::kBarrier: break;
  }
  return InvalidArgument("MeasureCollective: barrier has no bandwidth");
}
}  // namespace

Result<CollMeasurement> MeasureCollective(Comm& comm, CollOp op, uint64_t bytes, int iters, int warmup) {
  if (op == CollOp::kBarrier) return InvalidArgument("MeasureCollective: barrier has no bandwidth");
  if (iters < 1) return InvalidArgument(fmt::format("MeasureCollective: iters {} < 1", iters));
  const int n = comm.size();
  const size_t elems = bytes / sizeof(float);
  const bool sharded = op == CollOp::kAllGather || op == CollOp::kReduceScatter;
  const size_t per_rank = sharded ? elems / static_cast<size_t>(n) : elems;
  if (per_rank == 0) {
    return InvalidArgument(fmt::format("MeasureCollective {}: {} bytes is less than one fp32 element{}",
                                       CollOpName(op), bytes, sharded ? " per rank" : ""));
  }
  const size_t total = sharded ? per_rank * static_cast<size_t>(n) : per_rank;
  std::vector<float> in(op == CollOp::kAllGather ? per_rank : total, 1.0f / 1024);
  std::vector<float> out(op == CollOp::kAllGather ? total : (op == CollOp::kReduceScatter ? per_rank : 0));

  for (int i = 0; i < warmup; ++i) ZINF_RETURN_IF_ERROR(RunOnce(comm, op, in, out, per_rank));
  ZINF_RETURN_IF_ERROR(comm.Barrier());
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) ZINF_RETURN_IF_ERROR(RunOnce(comm, op, in, out, per_rank));
  double mine = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / iters;

  std::vector<double> all(static_cast<size_t>(n));
  ZINF_RETURN_IF_ERROR(comm.AllGatherBytes(&mine, sizeof(double), all.data()));
  CollMeasurement m;
  m.op = op;
  m.ranks = n;
  m.bytes = total * sizeof(float);
  m.iters = iters;
  m.time_s = *std::max_element(all.begin(), all.end());
  m.algbw_gbps = m.time_s > 0 ? static_cast<double>(m.bytes) / m.time_s / 1e9 : 0;
  m.busbw_gbps = m.algbw_gbps * BusBandwidthFactor(op, n);
  return m;
}

}  // namespace zinf
