// Collective bus bandwidth (nccl-tests definitions) of the executor's Comm: allgather over
// message sizes (the curve the planner interpolates), reduce-scatter and allreduce. Under
// mpirun (zplan profile launched with -np R) the ranks are MPI processes (MpiComm); otherwise
// two ranks are threads of this process (ThreadComm: the shared-memory path).
#include <fmt/format.h>

#include <algorithm>
#include <mutex>

#include "core/units.h"
#include "executor/comm/coll_probe.h"
#include "executor/comm/thread_comm.h"
#include "planner/profile/probes.h"

namespace zinf {

Status MeasureCollectiveCurve(Comm& c, bool quick, CollectiveCurve* out) {
  out->points.clear();
  for (uint64_t bytes = 64 << 10; bytes <= (quick ? (16ull << 20) : (64ull << 20)); bytes *= 4) {
    const int iters = bytes < (4u << 20) ? 20 : 5;
    ZINF_ASSIGN_OR_RETURN(CollMeasurement a, MeasureCollective(c, CollOp::kAllGather, bytes, iters));
    ZINF_ASSIGN_OR_RETURN(CollMeasurement r, MeasureCollective(c, CollOp::kReduceScatter, bytes, iters));
    ZINF_ASSIGN_OR_RETURN(CollMeasurement x, MeasureCollective(c, CollOp::kAllReduce, bytes, iters));
    out->points.push_back({a, r, x});
  }
  out->ranks = c.size();
  out->transport = c.name();
  return Status::Ok();
}

Status ProbeCollectives(ProfileContext& ctx, HwProfile& hw) {
  const bool quick = ctx.options().quick;
  CollectiveCurve cc;
  if (ctx.options().comm && ctx.options().comm->size() > 1) {
    ctx.Progress("collectives", fmt::format("{} MPI ranks", ctx.options().comm->size()));
    ZINF_RETURN_IF_ERROR(MeasureCollectiveCurve(*ctx.options().comm, quick, &cc));
  } else {
    CommOptions co;
    co.timeout_s = 60;  // a stuck collective becomes an error, never a hang
    ThreadCommGroup group(2, co);
    std::mutex mu;
    ctx.Progress("collectives", "2 thread ranks");
    ZINF_RETURN_IF_ERROR(group.Run([&](Comm& c) -> Status {
      CollectiveCurve mine;
      ZINF_RETURN_IF_ERROR(MeasureCollectiveCurve(c, quick, &mine));
      std::lock_guard<std::mutex> l(mu);
      if (c.rank() == 0) cc = mine;
      return Status::Ok();
    }));
  }
  if (cc.points.empty()) return Aborted("collective probe interrupted");
  std::vector<CurvePoint> curve;
  for (const auto& p : cc.points) curve.push_back({static_cast<double>(p.allgather.bytes), p.allgather.busbw_gbps * 1e9});
  const auto& last = cc.points.back();
  hw.allgather_curve = curve;
  hw.intra_node_bw = curve.back().y;
  hw.inter_node_bw = 0;
  hw.collective_latency_s = 0;  // the curve carries the small-message cost
  const std::string m = fmt::format(
      "measured: {}, executor Comm ({}, {} ranks), nccl-tests bus bandwidth; allgather over {} sizes (largest {}); "
      "at the largest reduce-scatter {}, allreduce {}; smallest allgather takes {}",
      ctx.Today(), cc.transport, cc.ranks, curve.size(), FormatBytes(curve.back().x), FormatBandwidth(last.reduce_scatter.busbw_gbps * 1e9),
      FormatBandwidth(last.allreduce.busbw_gbps * 1e9), FormatSeconds(cc.points.front().allgather.time_s));
  hw.provenance["network.intra_node"] = m;
  hw.provenance["network.inter_node"] = "setting: not applicable, one node (CPU backend)";
  hw.provenance["network.latency_s"] = "setting: 0, the measured allgather curve includes small-message cost";
  return Status::Ok();
}

}  // namespace zinf
