// HwProfile: what one node of a machine can do (format zinf.hwprofile/v1). Bandwidths are
// per GPU with every GPU of the node active (node-level contention included) unless the
// name says _alone or _node. Every value should carry provenance (datasheet, paper, measured).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/status.h"

namespace zinf {

struct CurvePoint {
  double x = 0;  // GEMM size in FLOP (2*m*n*k), or message size in bytes
  double y = 0;  // achieved FLOP/s, or bus bandwidth in bytes/s
};

// A linear layer's GEMM rates at one row count (tokens): forward and backward curves keyed by
// the forward's FLOPs, as gemm_curve and gemm_bwd_curve.
struct GemmTokenCurve {
  double tokens = 0;
  std::vector<CurvePoint> fwd, bwd;
};

struct HwProfile {
  std::string name;
  std::string description;
  std::string backend = "cuda";  // cuda | cpu (the CPU backend: "device" = this CPU + arena)
  // node
  int64_t gpus_per_node = 1;
  int64_t cpu_cores = 1;
  // CPU backend, more runnable threads than cores: the mean time a busy thread runs before
  // the scheduler switches it out (0: not measured). Recorded to describe the machine; the
  // time model does not use it (docs/performance-model.md: it over-predicted 4 ranks on 2
  // cores by up to 2.6x; the cores' time in collectives is what they cost).
  double cpu_sched_slice_s = 0;
  // CPU backend, optional: what a collective costs ranks that share too few cores (2 x cores
  // 1-thread ranks, coupled by a tiny allgather against independent), keyed by the compute
  // between collectives (x: seconds per iteration at the rank's share; y: extra seconds per
  // collective). Empty: not modelled. Used for plans with more ranks per node than cores.
  // coupling_curve: each collective behind one lane (parameters on the device: the network
  // lane's allgather alone); _host: behind a host->device copy on its own lane first (params
  // on the host); _nvme: behind an NVMe read (its measured latency, waited), a copy and the
  // allgather, three lanes (params on NVMe). Each hand-off is a wake-up on the shared cores.
  std::vector<CurvePoint> coupling_curve, coupling_curve_host, coupling_curve_nvme;
  // CPU backend, optional: what a parameter fetch's lane hand-offs cost a rank whose kernels'
  // threads hold every core it may use (no more ranks than cores), keyed by the compute
  // between fetches (x: seconds; y: extra seconds per fetch): _host, a copy lane alone
  // (params on the host); _nvme, an NVMe lane job (its measured latency) then the copy lane.
  // Empty: not modelled. Used for plans with params off the device and ranks <= cores.
  std::vector<CurvePoint> fetch_wake_curve_host, fetch_wake_curve_nvme;
  double host_memory_bytes = 0;     // usable host memory per node
  double nvme_capacity_bytes = 0;   // per node
  // device
  std::string device_name;
  double device_memory_bytes = 0;   // per GPU (CPU backend: the arena budget)
  std::string dtype = "fp16";       // training dtype of the compute rate
  double peak_flops = 0;            // per GPU, datasheet
  double achievable_flops = 0;      // per GPU, large-GEMM rate
  double memory_bw = 0;             // device memory bandwidth (HBM; CPU backend: host copy bw)
  std::vector<CurvePoint> gemm_curve;  // achieved rate by GEMM size; empty -> achievable_flops
  // Optional: a linear layer's backward (dW = dY^T X and dX = dY W, the executor's layouts),
  // keyed by the forward GEMM's FLOPs: y = 2 x forward FLOPs / (dW + dX time).
  // Empty: backward GEMMs at gemm_curve (backward = 2 x forward).
  std::vector<CurvePoint> gemm_bwd_curve;
  // Optional: the same two curves per row count (tokens), increasing. A GEMM's rate at one
  // FLOP count depends on its shape: on a 2-core EPYC, 64 x 1024 x 4096 ran at 60 GFLOP/s and
  // 1024 x 1024 x 256 (the same FLOPs) at 108, so curves keyed by FLOPs alone mix them. With
  // them a linear of T tokens is costed from the curves of the token counts around T.
  std::vector<GemmTokenCurve> gemm_token_curves;
  // Optional: the same curve in bf16 where the profile measured it (informational on the CPU
  // backend, which trains in fp32).
  std::vector<CurvePoint> gemm_curve_bf16;
  // Optional: causal attention (QK^T, softmax, AV) of the executor's kernel, keyed by one
  // head's forward FLOPs (4 T^2 hd): forward FLOPs (4 B H T^2 hd) / (forward + backward
  // time) x 3, i.e. the rate that gives the measured forward + backward time under the
  // model's backward = 2 x forward.
  // Empty: attention is costed as GEMMs at gemm_curve plus its softmax at memory_bw.
  std::vector<CurvePoint> attention_curve;
  // Optional: the forward alone, same key, y = forward FLOPs / forward time; with it the
  // backward is the rest of attention_curve's forward + backward time.
  std::vector<CurvePoint> attention_fwd_curve;
  // Optional, CPU backend: a memory pass's rate over data the caches hold, by its working set
  // (bytes of the tensors it touches): the executor's elementwise kernel (Backend::Add) run
  // again and again over the same tensors, bytes read + written / time (its thread team's
  // launch taken out). Falls to memory_bw's level beyond the last-level cache. Empty: every
  // memory pass at memory_bw.
  std::vector<CurvePoint> hot_pass_curve;
  // Optional, CPU backend, a profile of one-thread devices (--threads 1): what a core's GEMMs
  // do while two one-thread ranks take turns on it (two bound to every core, as zrun binds
  // more ranks than cores), over one thread alone on it as the other probes timed them, by
  // the GEMM's working set (x: bytes of its three matrices, y: the ratio, at most 1): the
  // ranks' working sets together outgrow the caches one rank's fits in. The time model
  // divides the GEMMs of a plan with more ranks than cores by it. Empty: 1 (not measured).
  std::vector<CurvePoint> shared_core_curve;
  // The curve at `working_set` bytes (1 without it).
  double SharedCoreSpeed(double working_set) const;
  // Optional: seconds every op of a forward pass pays besides its arithmetic (the executor's
  // dispatch, thread start-up, provider calls); backward pays twice that. 0: not modelled.
  double op_overhead_s = 0;
  // Optional, CPU backend: seconds one parallel kernel (an OpenMP region) costs beyond its
  // elements: waking and joining the thread team. Added once per such kernel that the model
  // costs as memory passes or at large-array rates. 0: not modelled.
  double kernel_launch_s = 0;
  // Optional: GELU forward elements/s of the executor's kernel (tanh: compute-bound on CPUs);
  // 0: costed as a memory pass.
  double gelu_elems_per_s = 0;
  // Optional: GELU backward elements/s; 0: 2 x the forward's time.
  double gelu_bwd_elems_per_s = 0;
  // Optional: softmax cross-entropy forward / backward logits/s of the executor's kernels (an
  // exp per logit; the backward recomputes the softmax); 0: costed as memory passes.
  double cross_entropy_elems_per_s = 0, cross_entropy_bwd_elems_per_s = 0;
  // bandwidth, bytes/s, per GPU with all GPUs active
  double h2d_bw = 0, d2h_bw = 0;
  double h2d_bw_alone = 0, d2h_bw_alone = 0;
  double nvme_read_bw = 0, nvme_write_bw = 0;
  double nvme_read_bw_node = 0, nvme_write_bw_node = 0;
  double host_mem_bw = 0;           // node, copy bandwidth
  double intra_node_bw = 0;         // allgather bus bandwidth between GPUs of a node
  double inter_node_bw = 0;         // per node, between nodes
  double collective_latency_s = 0;  // per collective call
  std::vector<CurvePoint> allgather_curve;  // busbw by message size; empty -> intra_node_bw
  // CPU backend, optional: allgather and reduce-scatter bus bandwidth by whole-buffer size
  // among 2 x cores rank processes over shared memory (the coupling probe's ranks), for plans
  // with more ranks per node than cores: the time is the whole node's, not a rank's share.
  std::vector<CurvePoint> shm_allgather_curve, shm_reduce_scatter_curve;
  // CPU backend, optional: the CPU a rank's lane spends on one of those collectives beside
  // the GEMMs on the same cores (as zrun gathers the next op's parameters while the current
  // op computes) beyond what the same collective takes back to back, by whole-buffer size:
  // x bytes, y seconds per collective per rank (the coupling probe).
  std::vector<CurvePoint> shm_allgather_cpu_beside_curve, shm_reduce_scatter_cpu_beside_curve;
  // CPU backend, optional: the CPU one of those collectives costs a rank back to back (the shm
  // curves' runs), by whole-buffer size: x bytes, y seconds per collective per rank (the
  // coupling probe). With the _cpu_beside_ curves, the CPU a rank's network lane spends on it.
  std::vector<CurvePoint> shm_allgather_cpu_curve, shm_reduce_scatter_cpu_curve;
  // CPU optimizer
  double cpu_adam_params_per_s = 0;  // node-wide CPU Adam throughput (fp32 params/s)
  // NVMe I/O settings that measured best
  int64_t nvme_block_size = 1 << 20;
  int64_t nvme_queue_depth = 8;
  // CPU backend: CPU time one NVMe request (a shard's read or write through the executor's
  // store: submission, completion wake-up, CRC-32C) takes from the cores; 0 = not measured.
  double nvme_cpu_per_request_s = 0;
  double nvme_cpu_per_byte_s = 0;  // and per byte of it (CRC-32C, copies)
  // CPU backend, optional: the wall time of one read request beyond its bytes at the read
  // bandwidth (a request waited before the next, as zrun's NVMe lane issues a shard): the
  // drive's latency plus the submission and completion path. Added to every NVMe read the
  // model issues; 0: not modelled.
  double nvme_read_latency_s = 0;
  // CPU backend, optional: the same with every core busy (a spinning thread per core, as the
  // compute's thread team keeps them during a pass): the completion's wake-up waits for a
  // core. What the passes' and the optimizer's reads pay; 0: read_latency_s for them too.
  double nvme_read_latency_busy_s = 0;
  // CPU backend, optional: the NVMe lane's effective rate by transfer size (x: bytes of one
  // transfer, y: bytes/s = x / its mean wall time), reads and writes alternating, each waited
  // before the next and CRC-32C'd, at block_size and queue_depth, as zrun's optimizer lane
  // reads a group's states and writes the previous group's. Empty: not measured (the model
  // uses the bandwidths and read latencies above).
  std::vector<CurvePoint> nvme_lane_read_curve, nvme_lane_write_curve;
  // Seconds of one lane transfer of `bytes` from those curves (below the first point: that
  // point's time; above the last: its rate); 0 when the curve is empty.
  double NvmeLaneSeconds(double bytes, bool write) const;
  // Optional: how the lane and CPU Adam slow each other when they run at once, as in zrun's
  // optimizer (a group's Adam on every core while the lane writes and reads the groups beside
  // it): a lane read's and write's time beside Adam over its time alone, and an Adam pass's
  // beside the lane over alone. 0: not measured (each runs as if alone).
  double nvme_lane_read_beside_adam = 0, nvme_lane_write_beside_adam = 0, nvme_adam_beside_lane = 0;
  bool HasLaneAdamCoupling() const { return nvme_lane_read_beside_adam > 0 && nvme_lane_write_beside_adam > 0 && nvme_adam_beside_lane > 0; }
  bool HasNvmeLaneCurves() const { return !nvme_lane_read_curve.empty() && !nvme_lane_write_curve.empty(); }
  // The read latency a request issued while the compute runs pays.
  double BusyReadLatency() const { return nvme_read_latency_busy_s > 0 ? nvme_read_latency_busy_s : nvme_read_latency_s; }
  // dotted key ("bandwidth.h2d") -> where the value comes from
  std::map<std::string, std::string> provenance;

  // Achieved FLOP/s for one GEMM of `flop` FLOPs (log-linear interpolation of the curve);
  // with `tokens` > 0 and gemm_token_curves, from the curves at the token counts around it
  // (log-linear in tokens too; the nearest count's outside the measured range).
  double GemmRate(double flop, double tokens = 0) const;
  // Effective attention rate for heads of `head_flop` forward FLOPs; 0 without a curve.
  double AttentionRate(double flop) const;
  // Forward-only attention rate; 0 without attention_fwd_curve.
  double AttentionFwdRate(double flop) const;
  // Bytes/s of a memory pass whose tensors (working_set bytes) were just written or read by
  // the ops before it: hot_pass_curve at that size, memory_bw without the curve.
  double HotPassBw(double working_set) const;
  // Rate of a linear's backward (2 x `flop`); gemm_curve's where no backward curve was measured.
  double GemmBwdRate(double flop, double tokens = 0) const;
  // Allgather bus bandwidth for a message of `bytes` (whole gathered buffer).
  double AllgatherBusBw(double bytes) const;
  // Bus bandwidth from shm_allgather_curve or shm_reduce_scatter_curve (below the first point:
  // in proportion, a latency); 0 when that curve is empty.
  double ShmBusBw(double bytes, bool reduce_scatter) const;
  // A rank's extra CPU seconds for one such collective of `bytes` beside compute, from the
  // _cpu_beside_ curves: per byte interpolated between the measured sizes, flat per byte
  // outside them (a copy's CPU grows with its bytes); 0 without the curve.
  double ShmCpuBesideSeconds(double bytes, bool reduce_scatter) const;
  // A rank's CPU seconds for one such collective back to back, from the _cpu_ curves (per
  // byte as ShmCpuBesideSeconds); 0 without the curve.
  double ShmCpuSeconds(double bytes, bool reduce_scatter) const;
  // Extra seconds per collective from coupling_curve at `between_s` of compute between
  // collectives (flat beyond the measured points); 0 without the curve. `lanes`: the fetch
  // chain each collective waits behind (1 device, 2 host, 3 NVMe params); the curve of the
  // longest measured chain up to it.
  double CouplingPerCollective(double between_s, int lanes = 1) const;
  // Extra seconds per parameter fetch from fetch_wake_curve_nvme (nvme) or _host at
  // `between_s` of compute between fetches (flat beyond the measured points); 0 without it.
  double FetchWakePerFetch(double between_s, bool nvme) const;
  bool HasFetchWake() const { return !fetch_wake_curve_host.empty() || !fetch_wake_curve_nvme.empty(); }
  // Whether any coupling curve was measured.
  bool HasCoupling() const {
    return !coupling_curve.empty() || !coupling_curve_host.empty() || !coupling_curve_nvme.empty();
  }
};

// The dotted keys every complete profile has (used to check provenance coverage).
const std::vector<std::string>& HwProfileValueKeys();
// Keys of optional values that may carry provenance too.
const std::vector<std::string>& HwProfileOptionalValueKeys();

// Drops the device figures measured on the CPU backend's kernels that another backend's probe
// does not re-measure (gemm_bwd_curve, gemm_token_curves, the attention curves, op overhead, the GELU and
// cross-entropy rates) and their provenance, so a CUDA profile built on top of
// the CPU probes does not cost GPU kernels at CPU rates: the planner falls back to its
// GEMM-curve and memory-pass formulas for them.
void ClearCpuKernelFigures(HwProfile& hw);

Result<HwProfile> LoadHwProfile(const std::string& path);
std::string HwProfileToYaml(const HwProfile& hw);
Status SaveHwProfile(const HwProfile& hw, const std::string& path);

}  // namespace zinf
