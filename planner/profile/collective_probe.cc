// Collective bus bandwidth (nccl-tests definitions) of the executor's Comm between ranks of
// this node: allgather over message sizes (the curve the planner interpolates),
// reduce-scatter and allreduce at the largest size. Ranks are threads here (ThreadComm:
// the shared-memory path ranks on one node take); the per-call latency is the smallest time.
#include <fmt/format.h>

#include <algorithm>
#include <mutex>

#include "core/units.h"
#include "executor/comm/coll_probe.h"
#include "executor/comm/thread_comm.h"
#include "planner/profile/probes.h"

namespace zinf {

Status ProbeCollectives(ProfileContext& ctx, HwProfile& hw) {
  const int ranks = 2;
  const bool quick = ctx.options().quick;
  std::vector<uint64_t> sizes;
  for (uint64_t b = 64 << 10; b <= (quick ? (16ull << 20) : (64ull << 20)); b *= 4) sizes.push_back(b);
  std::vector<CurvePoint> curve;
  double latency = 1e30, rs_bw = 0, ar_bw = 0;
  std::mutex mu;
  CommOptions co;
  co.timeout_s = 60;  // a stuck collective becomes an error, never a hang
  for (size_t i = 0; i < sizes.size() && !ctx.cancelled(); ++i) {
    ThreadCommGroup group(ranks, co);
    const uint64_t bytes = sizes[i];
    const int iters = bytes < (4u << 20) ? 20 : 5;
    CollMeasurement ag{}, rs{}, ar{};
    Status st = group.Run([&](Comm& c) -> Status {
      ZINF_ASSIGN_OR_RETURN(CollMeasurement a, MeasureCollective(c, CollOp::kAllGather, bytes, iters));
      ZINF_ASSIGN_OR_RETURN(CollMeasurement r, MeasureCollective(c, CollOp::kReduceScatter, bytes, iters));
      ZINF_ASSIGN_OR_RETURN(CollMeasurement x, MeasureCollective(c, CollOp::kAllReduce, bytes, iters));
      if (c.rank() == 0) {
        std::lock_guard<std::mutex> l(mu);
        ag = a;
        rs = r;
        ar = x;
      }
      return Status::Ok();
    });
    ZINF_RETURN_IF_ERROR(st);
    curve.push_back({static_cast<double>(ag.bytes), ag.busbw_gbps * 1e9});
    latency = std::min(latency, ag.time_s);
    rs_bw = rs.busbw_gbps * 1e9;
    ar_bw = ar.busbw_gbps * 1e9;
    ctx.Progress("collectives", fmt::format("{}: allgather busbw {}, reduce-scatter {}, allreduce {}", FormatBytes(static_cast<double>(bytes)),
                                            FormatBandwidth(ag.busbw_gbps * 1e9), FormatBandwidth(rs_bw), FormatBandwidth(ar_bw)));
  }
  if (curve.empty()) return Aborted("collective probe interrupted");
  hw.allgather_curve = curve;
  hw.intra_node_bw = curve.back().y;
  hw.inter_node_bw = 0;
  hw.collective_latency_s = 0;  // the curve already carries small-message cost
  const std::string m = fmt::format(
      "measured {}: executor Comm (ThreadComm, {} ranks in one process), nccl-tests bus bandwidth, allgather over {} sizes "
      "(largest {}); reduce-scatter {} and allreduce {} at the largest; smallest allgather {}",
      ctx.Today(), ranks, curve.size(), FormatBytes(curve.back().x), FormatBandwidth(rs_bw), FormatBandwidth(ar_bw), FormatSeconds(latency));
  hw.provenance["network.intra_node"] = m;
  hw.provenance["network.inter_node"] = "not applicable: one node (CPU backend)";
  hw.provenance["network.latency_s"] = "0: the measured allgather curve includes small-message cost";
  return Status::Ok();
}

}  // namespace zinf
