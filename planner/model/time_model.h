// Analytic step-time model with overlap (DESIGN.md "performance model"). Resources:
// compute, h2d, d2h, nvme_read, nvme_write, network, cpu_optimizer. Forward+backward overlap
// fetches with compute when the prefetch depths allow it; the optimizer step follows.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/hw_profile.h"
#include "core/model_spec.h"
#include "core/plan.h"
#include "planner/model/memory_model.h"
#include "planner/model/op_graph.h"

namespace zinf {

struct StepFlops {
  double model = 0;      // fwd + bwd (6 x params x tokens + attention), what TFLOP/s counts
  double recompute = 0;  // extra forward for checkpointed segments
  double total() const { return model + recompute; }
};
StepFlops ComputeStepFlops(const ModelSpec& m, const PlanKnobs& k);

// Seconds of compute for one micro-step (fwd + bwd + recompute) at the profiled GEMM curve.
double ComputeTimePerMicroStep(const ModelSpec& m, const HwProfile& hw, const PlanKnobs& k);

// Parameter fetches per micro-step: forward, backward and, with checkpointing, the recompute
// (as DeepSpeed does: a recomputed segment gathers its params again).
double FetchesPerMicroStep(const ModelSpec& m, const PlanKnobs& k);

// Allgather / reduce-scatter time of a buffer of `bytes` (whole) across dp GPUs. CPU backend
// with more ranks per node than cores: at the profile's shm curves where it has them (measured
// among that many rank processes: the node's time, no share applied), plus the extra CPU
// the ranks' lanes spend on it beside the GEMMs (the _cpu_beside_ curves, over the cores).
double CollectiveTime(const HwProfile& hw, const PlanKnobs& k, double bytes, bool reduce_scatter = false);
// CPU backend, one node, more ranks than cores: the CPU seconds (at one core's speed) a rank's
// network lane spends on that collective: its back-to-back CPU and its extra beside the GEMMs
// (the shm _cpu_ and _cpu_beside_ curves). Not part of CollectiveTime, which charges the
// collective's time on the rank's share of the cores; 0 elsewhere or without the _cpu_ curve.
double CollectiveCpuTime(const HwProfile& hw, const PlanKnobs& k, double bytes, bool reduce_scatter = false);

// CPU backend: the time `requests` NVMe requests of `bytes` in all take from the rank's
// compute (the store's submission, completion wake-ups and CRC-32C run on the cores the
// kernels use), at the profile's measured CPU cost per request and per byte, whole (one core
// busy for it holds up a kernel split over the device's cores) at the rank's share. 0 on
// other backends.
double NvmeCpuTime(const HwProfile& hw, const PlanKnobs& k, double requests, double bytes);

// CPU backend: the copy of one group's gradient shard of `shard_bytes` that the reduce lane
// makes besides the reduce-scatter and the grad offload, on the cores: with the grads on the
// device it writes the (scaled) shard into them (off the device that write is the d2h; with
// one rank it reads the gathered gradient itself, with no reduce-scatter and no copy before).
// At the measured single-thread copy rate (h2d); 0 on other backends.
double GradHandOffTime(const HwProfile& hw, const PlanKnobs& k, double shard_bytes);

// CPU backend, more ranks per node than cores: what each collective costs besides its own
// copies when the ranks it waits for share the cores (wake-ups, switches, cores idle while the
// last of a time-sliced pair finishes): node.coupling_curve (parameters on the device;
// _host and _nvme behind those fetch chains) at the compute a rank does between two
// collectives, the micro-step's compute over its collectives (forward, recompute and
// backward allgathers, reduce-scatters), from `ops` (BuildForwardOps). 0 otherwise.
double CouplingPerCollective(const ModelSpec& m, const HwProfile& hw, const PlanKnobs& k, const std::vector<Op>& ops);
// CPU backend, params off the device, no more ranks per node than cores: the extra seconds each
// parameter fetch's lane hand-offs cost (the profile's fetch wake curve at the compute between
// a micro-step's lane hand-offs: its fetches and its gradients'); 0 otherwise. Charged on the
// cores with the fetch's copy.
double FetchWakePerFetch(const ModelSpec& m, const HwProfile& hw, const PlanKnobs& k, const std::vector<Op>& ops);
// CPU backend, no more ranks per node than cores: the extra seconds each gradient hand-off to
// the comm lane costs (one per parameter op's backward; the lane wakes beside the compute's
// thread team as a fetch's copy lane does: the fetch wake curve of the copy lane at the compute
// between the micro-step's lane hand-offs); 0 otherwise. Charged on the cores with the hand-off.
double GradWakePerHandOff(const ModelSpec& m, const HwProfile& hw, const PlanKnobs& k, const std::vector<Op>& ops);
// Gradient hand-offs (one per parameter op) per micro-step.
double GradHandOffsPerMicroStep(const ModelSpec& m, const PlanKnobs& k, const std::vector<Op>& ops);
// Parameter fetches (one per parameter group and pass, the recompute's included) per micro-step.
double ParamFetchesPerMicroStep(const ModelSpec& m, const PlanKnobs& k, const std::vector<Op>& ops);
// Collectives one rank issues per micro-step (0 with one rank).
double CollectivesPerMicroStep(const ModelSpec& m, const PlanKnobs& k, const std::vector<Op>& ops);

// Bytes per parameter the optimizer step reads (read) or writes from/to NVMe: its states
// where they live there, plus OptimizerExtraNvmeReadBytes (read) or the params (written back)
// where those live there.
double OptimizerNvmeBytesPerParam(const PlanKnobs& k, const StateBytes& sb, bool read);

// Arrays of a group the optimizer step reads (read) or writes from/to NVMe, one request
// each: its fp32 states (m, v, a master copy if any), plus the gradient (read) and the
// params (fp32: read as the master; written back) where those live on NVMe.
double OptimizerNvmeArrays(const PlanKnobs& k, const StateBytes& sb, bool read);

// With the profile's NVMe lane curves (HwProfile::nvme_lane_*_curve): the seconds of one
// rank's transfer of `rank_bytes` through the NVMe lane, the node's ranks moving theirs at
// once (the drive serves their sum as one transfer). The curves include the latency and
// CRC-32C of a waited transfer, so neither the bandwidths nor the read latencies add to it.
// 0 without the curves.
double LaneTransferSeconds(const HwProfile& hw, const PlanKnobs& k, double rank_bytes, bool write);
// The same for `bytes_per_param` B a shard element of every parameter group, each group one
// transfer (a fetched shard; the optimizer's arrays of a group, which the executor submits
// together and waits for; a gradient shard): reads (write false) or writes.
double ShardsLaneSeconds(const ModelSpec& m, const HwProfile& hw, const PlanKnobs& k, double bytes_per_param, bool write);

struct TimeEstimate {
  double step_s = 0;
  double fwd_bwd_s = 0;
  double optimizer_s = 0;
  double efficiency = 0;  // no-overlap bound: t_compute / (t_compute + t_data)
  std::string bottleneck;
  std::map<std::string, double> busy_s;  // per resource, whole step
};

TimeEstimate EstimateTime(const ModelSpec& m, const HwProfile& hw, const PlanKnobs& k);

}  // namespace zinf
