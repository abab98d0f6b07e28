#include "planner/model/time_model.h"

#include <algorithm>
#include <cmath>

#include "planner/model/memory_model.h"
#include "planner/model/op_graph.h"

namespace zinf {
namespace {

double Safe(double bytes, double bw) { return bytes <= 0 ? 0.0 : (bw > 0 ? bytes / bw : 1e30); }

}  // namespace

StepFlops ComputeStepFlops(const ModelSpec& m, const PlanKnobs& k) {
  const ParamCounts pc = CountParams(m);
  const double tokens = static_cast<double>(k.micro_batch * k.seq_len * k.grad_accum);
  const double s = static_cast<double>(k.seq_len), hd = static_cast<double>(m.hidden);
  const double nl = static_cast<double>(m.n_layer);
  // GEMM params: blocks + LM head (tied or not); the embedding lookup is no GEMM.
  const double gemm_params = pc.blocks + static_cast<double>(m.vocab) * hd;
  const double fwd = 2.0 * gemm_params * tokens + 4.0 * tokens * s * hd * nl;  // + QK^T and AV
  StepFlops f;
  f.model = 3.0 * fwd;
  f.recompute = (fwd - 2.0 * static_cast<double>(m.vocab) * hd * tokens) * static_cast<double>(RecomputedLayers(m, k)) / nl;
  return f;
}

double ComputeTimePerMicroStep(const ModelSpec& m, const HwProfile& hw, const PlanKnobs& k) {
  // Blocks are identical: cost one and scale (the search calls this for every candidate).
  ModelSpec one = m;
  one.n_layer = 1;
  double outside = 0, block_fwd = 0, block_bwd = 0;
  for (const Op& op : BuildForwardOps(one, hw, k, /*with_names=*/false)) {
    if (op.in_block) {
      block_fwd += op.fwd_s;
      block_bwd += op.bwd_s;
    } else {
      outside += op.fwd_s + op.bwd_s;
    }
  }
  const double layers = static_cast<double>(m.n_layer);
  const double recompute = block_fwd * static_cast<double>(RecomputedLayers(m, k));
  return outside + layers * (block_fwd + block_bwd) + recompute;
}

double FetchesPerMicroStep(const ModelSpec& m, const PlanKnobs& k) {
  // Forward and backward gather every parameter; the recompute gathers its layers' again.
  const ParamCounts pc = CountParams(m);
  return 2.0 + (pc.total > 0 ? pc.blocks / pc.total * static_cast<double>(RecomputedLayers(m, k)) / static_cast<double>(m.n_layer) : 0.0);
}

double CollectiveTime(const HwProfile& hw, const PlanKnobs& k, double bytes, bool reduce_scatter) {
  const double n = static_cast<double>(k.dp());
  if (n <= 1 || bytes <= 0) return 0.0;
  const double g = static_cast<double>(k.gpus_per_node), nodes = static_cast<double>(k.nodes);
  if (nodes <= 1 && CpuOversubscribed(hw, k)) {
    // The node's time back to back, plus what every rank's lane spends beyond it beside the
    // GEMMs (each core runs gpus_per_node / cores ranks' share of it).
    if (const double bus = hw.ShmBusBw(bytes, reduce_scatter); bus > 0)
      return bytes * (n - 1) / n / bus + hw.collective_latency_s +
             g / static_cast<double>(hw.cpu_cores) * hw.ShmCpuBesideSeconds(bytes, reduce_scatter);
  }
  double intra = g > 1 ? bytes * (n - 1) / n / hw.AllgatherBusBw(bytes) : 0.0;
  double inter = nodes > 1 ? Safe(bytes * (nodes - 1) / nodes, hw.inter_node_bw) : 0.0;
  // CPU backend: a collective is memcpy (and the sums of a reduce-scatter) by the rank's own
  // threads on the cores its kernels use, so it runs at the rank's share of them, as its kernels do.
  return (std::max(intra, inter) + hw.collective_latency_s) / CpuRankShare(hw, k);
}

double CollectiveCpuTime(const HwProfile& hw, const PlanKnobs& k, double bytes, bool reduce_scatter) {
  if (k.dp() <= 1 || bytes <= 0 || k.nodes > 1 || !CpuOversubscribed(hw, k)) return 0.0;
  const double back_to_back = hw.ShmCpuSeconds(bytes, reduce_scatter);
  return back_to_back > 0 ? back_to_back + hw.ShmCpuBesideSeconds(bytes, reduce_scatter) : 0.0;  // unknown without it
}

double NvmeCpuTime(const HwProfile& hw, const PlanKnobs& k, double requests, double bytes) {
  if (hw.backend != "cpu" || requests <= 0) return 0.0;
  // The lane's thread takes one core for the request's CPU. A device of several cores splits
  // each kernel evenly over its threads and waits for the slowest, so the kernel is held up by
  // all of it, not by its share over the device's cores.
  const double cpu = requests * hw.nvme_cpu_per_request_s + std::max(bytes, 0.0) * hw.nvme_cpu_per_byte_s;
  return cpu / CpuRankShare(hw, k);
}

double GradHandOffTime(const HwProfile& hw, const PlanKnobs& k, double shard_bytes) {
  if (hw.backend != "cpu" || hw.h2d_bw <= 0) return 0.0;
  if (k.placement.grads != Tier::kDevice) return 0.0;
  return shard_bytes / hw.h2d_bw / CpuRankShare(hw, k);
}

namespace {
// One micro-step of a rank: its collectives (0 with one rank) and its compute, recompute included.
struct MicroStepWork {
  double collectives = 0, compute_s = 0, fetches = 0;
  double grads = 0;  // gradient hand-offs to the comm lane: one per parameter op's backward
};

MicroStepWork MicroStep(const ModelSpec& m, const PlanKnobs& k, const std::vector<Op>& ops) {
  const int64_t recomputed = RecomputedLayers(m, k);
  const bool gathers = k.dp() > 1;
  MicroStepWork w;
  for (const Op& op : ops) {
    const bool again = op.in_block && op.layer < recomputed;
    w.compute_s += op.fwd_s + op.bwd_s + (again ? op.fwd_s : 0.0);
    // Forward and backward allgathers, the gradient's reduce-scatter, the recompute's allgather.
    if (gathers && op.params > 0) w.collectives += again ? 4 : 3;
    if (op.params > 0) w.fetches += again ? 3 : 2;  // forward, backward (, recompute)
    if (op.params > 0) w.grads += 1;
  }
  return w;
}
}  // namespace

double CollectivesPerMicroStep(const ModelSpec& m, const PlanKnobs& k, const std::vector<Op>& ops) {
  return MicroStep(m, k, ops).collectives;
}

double CouplingPerCollective(const ModelSpec& m, const HwProfile& hw, const PlanKnobs& k, const std::vector<Op>& ops) {
  if (!hw.HasCoupling() || !CpuOversubscribed(hw, k)) return 0.0;
  const MicroStepWork w = MicroStep(m, k, ops);
  // Each collective waits behind the parameters' fetch chain: 1 lane (device), 2 (host), 3 (NVMe).
  const int lanes = k.placement.params == Tier::kNvme ? 3 : k.placement.params == Tier::kHost ? 2 : 1;
  return w.collectives > 0 ? hw.CouplingPerCollective(w.compute_s / w.collectives, lanes) : 0.0;
}

double ParamFetchesPerMicroStep(const ModelSpec& m, const PlanKnobs& k, const std::vector<Op>& ops) {
  return MicroStep(m, k, ops).fetches;
}

namespace {
// CPU backend, no more ranks per node than cores: the compute between two of a micro-step's
// lane hand-offs (its parameter fetches where the params are off the device, and its
// gradients' hand-offs to the comm lane); 0 where the wake curves do not apply.
double LaneWakeInterval(const MicroStepWork& w, const HwProfile& hw, const PlanKnobs& k) {
  if (hw.backend != "cpu" || !hw.HasFetchWake() || CpuOversubscribed(hw, k)) return 0.0;
  const double handoffs = (k.placement.params == Tier::kDevice ? 0.0 : w.fetches) + w.grads;
  return handoffs > 0 ? w.compute_s / handoffs : 0.0;
}
}  // namespace

double FetchWakePerFetch(const ModelSpec& m, const HwProfile& hw, const PlanKnobs& k, const std::vector<Op>& ops) {
  if (k.placement.params == Tier::kDevice) return 0.0;
  const double between = LaneWakeInterval(MicroStep(m, k, ops), hw, k);
  return between > 0 ? hw.FetchWakePerFetch(between, k.placement.params == Tier::kNvme) : 0.0;
}

double GradWakePerHandOff(const ModelSpec& m, const HwProfile& hw, const PlanKnobs& k, const std::vector<Op>& ops) {
  const double between = LaneWakeInterval(MicroStep(m, k, ops), hw, k);
  return between > 0 ? hw.FetchWakePerFetch(between, /*nvme=*/false) : 0.0;  // one hop: the comm lane
}

double GradHandOffsPerMicroStep(const ModelSpec& m, const PlanKnobs& k, const std::vector<Op>& ops) {
  return MicroStep(m, k, ops).grads;
}

double OptimizerNvmeBytesPerParam(const PlanKnobs& k, const StateBytes& sb, bool read) {
  if (k.placement.optimizer == Tier::kDevice) return 0.0;
  const double states = k.placement.optimizer == Tier::kNvme ? sb.optimizer : 0.0;
  return states + (read ? OptimizerExtraNvmeReadBytes(k, sb) : (k.placement.params == Tier::kNvme ? sb.param : 0.0));
}

double OptimizerNvmeArrays(const PlanKnobs& k, const StateBytes& sb, bool read) {
  if (k.placement.optimizer == Tier::kDevice) return 0.0;
  double n = k.placement.optimizer == Tier::kNvme ? std::ceil(sb.optimizer / 4.0) : 0.0;
  if (read && k.placement.grads == Tier::kNvme) n += 1;
  if (k.placement.params == Tier::kNvme && (!read || k.dtype == "fp32")) n += 1;
  return n;
}

double LaneTransferSeconds(const HwProfile& hw, const PlanKnobs& k, double rank_bytes, bool write) {
  if (!hw.HasNvmeLaneCurves() || rank_bytes <= 0) return 0.0;
  return hw.NvmeLaneSeconds(static_cast<double>(std::max<int64_t>(k.gpus_per_node, 1)) * rank_bytes, write);
}

double ShardsLaneSeconds(const ModelSpec& m, const HwProfile& hw, const PlanKnobs& k, double bytes_per_param, bool write) {
  if (!hw.HasNvmeLaneCurves() || bytes_per_param <= 0) return 0.0;
  // Blocks are identical: one block's groups, scaled (the search calls this per candidate).
  ModelSpec one = m;
  one.n_layer = 1;
  const double dp = static_cast<double>(k.dp());
  double outside = 0, block = 0;
  for (const Op& op : BuildForwardOps(one, hw, k, /*with_names=*/false)) {
    if (op.params <= 0) continue;
    (op.in_block ? block : outside) += LaneTransferSeconds(hw, k, bytes_per_param * std::ceil(op.params / dp), write);
  }
  return outside + static_cast<double>(m.n_layer) * block;
}

TimeEstimate EstimateTime(const ModelSpec& m, const HwProfile& hw, const PlanKnobs& k) {
  const ParamCounts pc = CountParams(m);
  const StateBytes sb = StateBytesFor(k.dtype, k.accounting);
  const double P = pc.total, dp = static_cast<double>(k.dp());
  const double ga = static_cast<double>(k.grad_accum), w = DtypeBytes(k.dtype);
  const Placement& pl = k.placement;
  const int64_t n_ops = m.n_layer * 6 * k.tile_factor + 2;  // fetch units per pass
  const double nvme_r = NvmeReadBwPerRank(hw, k), nvme_w = NvmeWriteBwPerRank(hw, k);

  // Per micro-step: params fetched for forward, backward and (checkpointing) the recompute.
  const double shard_bytes = w * P / dp;
  const double fetches = FetchesPerMicroStep(m, k) * ga;
  std::map<std::string, double> busy;
  busy["compute"] = ga * ComputeTimePerMicroStep(m, hw, k);
  // With the NVMe lane curves every group's shard is a transfer at the lane's measured time for
  // its size (latency included); else bytes at the bandwidth plus a busy read latency each.
  const bool lane = hw.HasNvmeLaneCurves();
  if (pl.params == Tier::kNvme) busy["nvme_read"] += fetches * (lane ? ShardsLaneSeconds(m, hw, k, w, false) : Safe(shard_bytes, nvme_r));
  if (pl.params != Tier::kDevice) busy["h2d"] += fetches * Safe(shard_bytes, hw.h2d_bw);
  busy["network"] += fetches * CollectiveTime(hw, k, w * P);        // allgathers
  busy["network"] += ga * CollectiveTime(hw, k, w * P, true);       // reduce-scatter of grads
  if (hw.HasCoupling() && CpuOversubscribed(hw, k)) {  // spares the op build otherwise
    const std::vector<Op> ops = BuildForwardOps(m, hw, k, false);
    busy["network"] += ga * CollectivesPerMicroStep(m, k, ops) * CouplingPerCollective(m, hw, k, ops);
  }
  if (hw.backend == "cpu" && hw.HasFetchWake() && !CpuOversubscribed(hw, k)) {  // spares the op build otherwise
    const std::vector<Op> ops = BuildForwardOps(m, hw, k, false);
    busy["compute"] += ga * (ParamFetchesPerMicroStep(m, k, ops) * FetchWakePerFetch(m, hw, k, ops) +
                             GradHandOffsPerMicroStep(m, k, ops) * GradWakePerHandOff(m, hw, k, ops));
  }
  if (pl.grads != Tier::kDevice) busy["d2h"] += ga * Safe(sb.grad * P / dp, hw.d2h_bw);
  busy["compute"] += ga * GradHandOffTime(hw, k, sb.grad * P / dp);
  if (pl.grads == Tier::kNvme) {  // written per micro-step; micro-steps after the first read it back
    busy["nvme_write"] += ga * (lane ? ShardsLaneSeconds(m, hw, k, sb.grad, true) : Safe(sb.grad * P / dp, nvme_w));
    busy["nvme_read"] += (ga - 1) * (lane ? ShardsLaneSeconds(m, hw, k, sb.grad, false) : Safe(sb.grad * P / dp, nvme_r));
  }
  // CPU backend: each NVMe request of the passes (a group's shard: params fetched, grads
  // written and read back) also takes CPU from the compute.
  const bool any_nvme = pl.params == Tier::kNvme || pl.grads == Tier::kNvme || pl.optimizer == Tier::kNvme;
  const double groups = hw.backend == "cpu" && any_nvme ? static_cast<double>(ParamGroups(BuildForwardOps(m, hw, k, false))) : 0.0;
  if (pl.params == Tier::kNvme) {
    busy["compute"] += NvmeCpuTime(hw, k, fetches * groups, fetches * shard_bytes);
    if (!lane) busy["nvme_read"] += fetches * groups * hw.BusyReadLatency();  // each group's shard a request
  }
  if (pl.grads == Tier::kNvme) {
    busy["compute"] += NvmeCpuTime(hw, k, (2 * ga - 1) * groups, (2 * ga - 1) * sb.grad * P / dp);
    if (!lane) busy["nvme_read"] += (ga - 1) * groups * hw.BusyReadLatency();  // the shards read back
  }
  // Activation checkpoints offloaded: written in forward, read back in backward.
  if (SavedCheckpoints(m, k) > 0 && k.ckpt_tier == Tier::kHost) {
    double ckpt = w * static_cast<double>(k.micro_batch * k.seq_len * m.hidden) * static_cast<double>(SavedCheckpoints(m, k));
    busy["d2h"] += ga * Safe(ckpt, hw.d2h_bw);
    busy["h2d"] += ga * Safe(ckpt, hw.h2d_bw);
  }
  // Forward/backward: overlapped resources run concurrently; a path with prefetch depth 0
  // is serialised with compute. The first fetch of a pass is exposed (pipeline fill).
  const double per_op_fill = [&] {
    double fill = 0;
    if (pl.params == Tier::kNvme) fill += Safe(shard_bytes / n_ops, nvme_r);
    if (pl.params != Tier::kDevice) fill += Safe(shard_bytes / n_ops, hw.h2d_bw);
    fill += CollectiveTime(hw, k, w * P / n_ops);
    return fill;
  }();
  // CPU backend: no copy engine, host<->device copies are memcpy on the cores the kernels use,
  // and so are the collectives between its ranks (shared memory, no NIC): they add to compute.
  const bool on_cores = hw.backend == "cpu";
  double overlapped = busy["compute"] + (on_cores ? busy["h2d"] + busy["d2h"] + busy["network"] : 0.0), serial = 0;
  auto place = [&](const std::string& res, int64_t depth) {
    if (!busy.count(res)) return;
    if (depth > 0) overlapped = std::max(overlapped, busy[res]);
    else serial += busy[res];
  };
  // One NVMe queue serves reads and writes (see the simulator): overlap their sum.
  if (busy.count("nvme_read") || busy.count("nvme_write")) {
    const double nvme = busy["nvme_read"] + busy["nvme_write"];
    if (k.prefetch_nvme > 0) overlapped = std::max(overlapped, nvme);
    else serial += nvme;
  }
  if (hw.backend != "cpu") {
    place("h2d", k.prefetch_h2d);
    place("d2h", 1);
  }
  if (!on_cores) place("network", k.prefetch_allgather);
  const double fwd_bwd = overlapped + serial + fetches * per_op_fill;

  // Optimizer step on each rank's shard, after backward.
  double opt = 0;
  if (pl.optimizer == Tier::kDevice) {
    // Device Adam: read p, g, m, v, master; write p, m, v, master. On the CPU backend the
    // "device" Adam is the CPU Adam kernel: its measured rate, shared by the node's ranks.
    opt = hw.backend == "cpu" ? Safe(P / dp * static_cast<double>(k.gpus_per_node), hw.cpu_adam_params_per_s) + AdamLaunchTime(m, hw, k)
                              : Safe((sb.optimizer * 2 + sb.param * 2 + sb.grad) * P / dp, hw.memory_bw);
    busy["compute"] += opt;
  } else {
    const double g = static_cast<double>(k.gpus_per_node);
    double cpu = Safe(P / dp * g, hw.cpu_adam_params_per_s) + AdamLaunchTime(m, hw, k);
    busy["cpu_optimizer"] = cpu;
    double rd = 0, wr = 0;
    if (lane) {
      // The lane's measured time per transfer (latency, CRC and the drive's rate for its size).
      rd = ShardsLaneSeconds(m, hw, k, OptimizerNvmeBytesPerParam(k, sb, true), false);
      wr = ShardsLaneSeconds(m, hw, k, OptimizerNvmeBytesPerParam(k, sb, false), true);
    } else {
      if (pl.optimizer == Tier::kNvme) {
        rd = Safe(sb.optimizer * P / dp, nvme_r);
        wr = Safe(sb.optimizer * P / dp, nvme_w);
      }
      // Adam also reads the gradients and, without a separate fp32 master, the params themselves.
      rd += Safe(OptimizerExtraNvmeReadBytes(k, sb) * P / dp, nvme_r);
      if (hw.backend == "cpu") rd += groups * OptimizerNvmeArrays(k, sb, true) * hw.BusyReadLatency();
      // Updated working params go back to where they live (host-resident ones are updated in place).
      if (pl.params == Tier::kNvme) wr += Safe(sb.param * P / dp, nvme_w);
    }
    const double wb = pl.params == Tier::kDevice ? Safe(sb.param * P / dp, hw.h2d_bw) : 0.0;
    busy["h2d"] += wb;
    busy["nvme_read"] += rd;
    busy["nvme_write"] += wr;
    // CPU backend: the optimizer's NVMe requests (a group's arrays read, then written) on the cores.
    const double io_cpu =
        NvmeCpuTime(hw, k, groups * (OptimizerNvmeArrays(k, sb, true) + OptimizerNvmeArrays(k, sb, false)),
                    (OptimizerNvmeBytesPerParam(k, sb, true) + OptimizerNvmeBytesPerParam(k, sb, false)) * P / dp);
    cpu += io_cpu;
    busy["cpu_optimizer"] = cpu;
    // Sub-groups pipeline read, update, write and write-back; add one sub-group's fill.
    double chunks = k.optimizer_chunk_params > 0 ? std::max(1.0, P / dp / static_cast<double>(k.optimizer_chunk_params)) : 1.0;
    // NVMe reads and writes share the drive (one queue), so they add up.
    double slowest = std::max({cpu, rd + wr, wb});
    opt = slowest + (cpu + rd + wr + wb - slowest) / chunks;
  }

  TimeEstimate te;
  te.fwd_bwd_s = fwd_bwd;
  te.optimizer_s = opt;
  te.step_s = fwd_bwd + opt;
  te.busy_s = busy;
  double data = 0;
  for (const auto& [r, v] : busy)
    if (r != "compute") data = std::max(data, v);
  te.efficiency = busy["compute"] / (busy["compute"] + data);
  double best = -1;
  for (const auto& [r, v] : busy) {
    if (v > best) {
      best = v;
      te.bottleneck = r;
    }
  }
  return te;
}

}  // namespace zinf
