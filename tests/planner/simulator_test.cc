// The discrete-event simulator against the analytic model and against its own invariants.
#include "planner/sim/simulator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "planner/model/compute_speed.h"
#include "planner/model/op_graph.h"
#include "planner/model/time_model.h"
#include "planner/report/sim_trace.h"
#include "planner/search/evaluate.h"
#include "planner/search/search.h"
#include "test_fixtures.h"

namespace zinf {
namespace {

using testing::Dgx2;
using testing::Gpt;
using testing::PaperModel;

PlanKnobs Knobs(const ModelSpec& m, const HwProfile& hw, const char* strategy, int64_t nodes = 1) {
  SearchOptions o;
  o.nodes = nodes;
  PlanKnobs k = BaseKnobs(m, hw, o);
  k.placement = FindStrategy(strategy)->placement;
  k.micro_batch = 4;
  DeriveBuffers(m, k);
  return k;
}

double Busy(const SimResult& r, Res res) { return r.busy_s[static_cast<size_t>(res)]; }

// The CPU backend on a 2-core machine profiled as one device (DGX-2's other figures).
HwProfile TwoCoreCpu() {
  HwProfile hw = Dgx2();
  hw.backend = "cpu";
  hw.gpus_per_node = 1;
  hw.cpu_cores = 2;
  return hw;
}

// Four ranks of one micro-step on TwoCoreCpu(): more ranks than cores, no parameter offload.
PlanKnobs FourRanksOnTwoCores(const ModelSpec& m, const HwProfile& hw) {
  PlanKnobs k = Knobs(m, hw, "none");
  k.grad_accum = 1;
  k.gpus_per_node = 4;
  return k;
}

TEST(Simulator, NoOffloadOneGpuIsComputeBound) {
  HwProfile hw = Dgx2();
  ModelSpec m = Gpt(24, 2048, 16);
  PlanKnobs k = Knobs(m, hw, "none");
  k.gpus_per_node = 1;
  SimResult r = SimulateStep(m, hw, k);
  // Compute busy time equals the analytic compute time (same op costs) plus device Adam.
  TimeEstimate te = EstimateTime(m, hw, k);
  EXPECT_NEAR(Busy(r, Res::kCompute), te.busy_s["compute"], 1e-9 * te.busy_s["compute"]);
  EXPECT_NEAR(r.step_s, Busy(r, Res::kCompute), 1e-9);
  EXPECT_EQ(Busy(r, Res::kNetwork), 0.0);
}

TEST(Simulator, StepBoundedByBusiestResourceAndTotalWork) {
  HwProfile hw = Dgx2();
  for (const char* st : {"none", "opt:host", "opt:nvme", "params+opt:host", "params+opt:nvme", "all:nvme"}) {
    for (const ModelSpec& m : {Gpt(24, 2048, 16), PaperModel(128, 25, 256)}) {
      PlanKnobs k = Knobs(m, hw, st, 2);
      SimResult r = SimulateStep(m, hw, k);
      double max_busy = 0, sum = 0;
      for (double b : r.busy_s) {
        max_busy = std::max(max_busy, b);
        sum += b;
      }
      EXPECT_GE(r.step_s, max_busy * (1 - 1e-12)) << st;
      EXPECT_LE(r.step_s, sum * (1 + 1e-12)) << st;
      for (double u : r.utilisation) EXPECT_LE(u, 1.0 + 1e-12);
    }
  }
}

// On the CPU backend the collectives are the cores' work: they queue with compute instead of
// overlapping with it, so the step is at least compute plus network; on GPUs they overlap.
TEST(Simulator, CpuCollectivesQueueWithCompute) {
  ModelSpec m = Gpt(8, 1024, 16, 512);
  for (const char* backend : {"cpu", "cuda"}) {
    HwProfile hw = Dgx2();
    hw.backend = backend;
    PlanKnobs k = Knobs(m, hw, "none");
    SimResult r = SimulateStep(m, hw, k);
    TimeEstimate te = EstimateTime(m, hw, k);
    ASSERT_GT(Busy(r, Res::kNetwork), 0.0) << backend;
    const double serial = Busy(r, Res::kCompute) + Busy(r, Res::kNetwork);
    if (std::string(backend) == "cpu") {
      EXPECT_GE(r.step_s, serial * (1 - 1e-9));
      EXPECT_GE(te.step_s, (te.busy_s["compute"] + te.busy_s["network"]) * (1 - 1e-9));
    } else {
      EXPECT_LT(r.step_s, serial);
    }
  }
}

// One device on a 2-core node, of `backend`; and every state on NVMe in fp32 (the params are
// the master: no separate master array), one rank, no checkpointing, one micro-step.
HwProfile OneDeviceOn2Cores(const char* backend) {
  HwProfile hw = Dgx2();
  hw.backend = backend;
  hw.gpus_per_node = 1;
  hw.cpu_cores = 2;
  return hw;
}

PlanKnobs AllNvmeFp32(const ModelSpec& m, const HwProfile& hw) {
  PlanKnobs k = Knobs(m, hw, "all:nvme");
  k.gpus_per_node = 1;
  k.ckpt_interval = 0;
  k.grad_accum = 1;
  k.dtype = "fp32";
  return k;
}

// CPU backend: each NVMe request's CPU (measured per request and per byte) runs on the cores:
// the simulator queues it with compute, the analytic model adds it; other backends ignore it.
TEST(Simulator, CpuNvmeRequestsTakeTimeFromCompute) {
  ModelSpec m = Gpt(4, 256, 4, 128);
  for (const char* backend : {"cpu", "cuda"}) {
    HwProfile hw = OneDeviceOn2Cores(backend);
    const PlanKnobs k = AllNvmeFp32(m, hw);
    SimResult r0 = SimulateStep(m, hw, k);
    TimeEstimate t0 = EstimateTime(m, hw, k);
    hw.nvme_cpu_per_request_s = 50e-6;
    SimResult r1 = SimulateStep(m, hw, k);
    TimeEstimate t1 = EstimateTime(m, hw, k);
    const double groups = static_cast<double>(ParamGroups(BuildForwardOps(m, hw, k, false)));
    ASSERT_GT(groups, 0);
    if (std::string(backend) != "cpu") {
      EXPECT_EQ(r1.step_s, r0.step_s);
      EXPECT_EQ(t1.step_s, t0.step_s);
      continue;
    }
    // Per group: 2 param reads (forward, backward), 1 grad write, optimizer reads of p, g, m, v
    // and writes of p, m, v; 50 us each on one of the device's 2 cores, which holds up the
    // device's kernels (split evenly over both cores' threads) for all of it.
    const double per_req = 50e-6;
    SimOptions keep;
    keep.keep_tasks = true;
    double io_cpu = 0;
    for (const SimTask& t : SimulateStep(m, hw, k, keep).tasks)
      if (t.res == Res::kCompute && t.name.find("cpu") != std::string::npos) io_cpu += t.dur_s;
    EXPECT_NEAR(io_cpu, 10 * groups * per_req, 1e-9);
    EXPECT_GE(Busy(r1, Res::kCompute) - Busy(r0, Res::kCompute), 10 * groups * per_req * (1 - 1e-9));
    EXPECT_NEAR(t1.busy_s["compute"] - t0.busy_s["compute"], 3 * groups * per_req, 1e-9);
    EXPECT_NEAR(t1.busy_s["cpu_optimizer"] - t0.busy_s["cpu_optimizer"], 7 * groups * per_req, 1e-9);
    EXPECT_GT(r1.step_s, r0.step_s);
    EXPECT_GT(t1.step_s, t0.step_s);
    // Four ranks on the same cores: each rank's share is a quarter, its requests cost 4x.
    PlanKnobs k4 = k;
    k4.gpus_per_node = 4;
    EXPECT_NEAR(NvmeCpuTime(hw, k4, 1, 0), 4 * per_req, 1e-12);
    hw.nvme_cpu_per_byte_s = 1e-10;
    EXPECT_NEAR(NvmeCpuTime(hw, k, 2, 1e6), 2 * per_req + 1e6 * 1e-10, 1e-12);
  }
}

// A profile at another compute speed (zplan simulate --compute-speed): the cores' rates scale
// (on the CPU backend the collectives between its ranks too: memcpy on the cores), the drive's
// and the network's between nodes do not; a step of compute alone scales by 1 / speed.
TEST(Simulator, ComputeSpeedScalesTheCoresWorkOnly) {
  ModelSpec m = Gpt(4, 256, 4, 128);
  HwProfile hw = OneDeviceOn2Cores("cpu");
  hw.op_overhead_s = 5e-6;
  hw.nvme_cpu_per_request_s = 40e-6;
  hw.gemm_curve = {{1e6, 1e10}, {1e9, 5e10}};
  const HwProfile same = AtComputeSpeed(hw, 1.0);
  EXPECT_EQ(same.achievable_flops, hw.achievable_flops);
  EXPECT_EQ(same.description, hw.description);
  const HwProfile half = AtComputeSpeed(hw, 0.5);
  EXPECT_DOUBLE_EQ(half.achievable_flops, 0.5 * hw.achievable_flops);
  EXPECT_DOUBLE_EQ(half.gemm_curve[1].y, 0.5 * hw.gemm_curve[1].y);
  EXPECT_DOUBLE_EQ(half.gemm_curve[1].x, hw.gemm_curve[1].x);
  EXPECT_DOUBLE_EQ(half.memory_bw, 0.5 * hw.memory_bw);
  EXPECT_DOUBLE_EQ(half.h2d_bw, 0.5 * hw.h2d_bw);
  EXPECT_DOUBLE_EQ(half.op_overhead_s, 2 * hw.op_overhead_s);
  EXPECT_DOUBLE_EQ(half.nvme_cpu_per_request_s, 2 * hw.nvme_cpu_per_request_s);
  EXPECT_EQ(half.nvme_read_bw, hw.nvme_read_bw);
  EXPECT_EQ(half.nvme_write_bw, hw.nvme_write_bw);
  EXPECT_NE(half.description, hw.description);
  // The collectives between the node's ranks: copies and sums on the same cores.
  hw.intra_node_bw = 8e9;
  hw.inter_node_bw = 1e9;
  hw.collective_latency_s = 20e-6;
  hw.allgather_curve = {{1e6, 4e9}, {1e8, 8e9}};
  hw.shm_allgather_curve = {{1e6, 3e9}};
  hw.shm_reduce_scatter_curve = {{1e6, 2e9}};
  hw.shm_allgather_cpu_beside_curve = {{1e6, 1e-5}};  // and their CPU beside the GEMMs: seconds
  hw.shm_reduce_scatter_cpu_beside_curve = {{1e6, 3e-5}};
  hw.shm_allgather_cpu_curve = {{1e6, 4e-5}};  // and back to back
  hw.shm_reduce_scatter_cpu_curve = {{1e6, 7e-5}};
  const HwProfile slow_coll = AtComputeSpeed(hw, 0.5);
  EXPECT_DOUBLE_EQ(slow_coll.intra_node_bw, 4e9);
  EXPECT_DOUBLE_EQ(slow_coll.collective_latency_s, 40e-6);
  EXPECT_DOUBLE_EQ(slow_coll.allgather_curve[1].y, 4e9);
  EXPECT_DOUBLE_EQ(slow_coll.allgather_curve[1].x, 1e8);
  EXPECT_DOUBLE_EQ(slow_coll.shm_allgather_curve[0].y, 1.5e9);
  EXPECT_DOUBLE_EQ(slow_coll.shm_reduce_scatter_curve[0].y, 1e9);
  EXPECT_DOUBLE_EQ(slow_coll.shm_allgather_cpu_beside_curve[0].y, 2e-5);
  EXPECT_DOUBLE_EQ(slow_coll.shm_reduce_scatter_cpu_beside_curve[0].y, 6e-5);
  EXPECT_DOUBLE_EQ(slow_coll.shm_allgather_cpu_curve[0].y, 8e-5);
  EXPECT_DOUBLE_EQ(slow_coll.shm_reduce_scatter_cpu_curve[0].y, 1.4e-4);
  EXPECT_EQ(slow_coll.inter_node_bw, hw.inter_node_bw);  // the NIC's
  // A memory speed apart: what streams through memory follows it, the arithmetic the compute's.
  HwProfile hm = hw;
  hm.host_mem_bw = 2e10;
  hm.cpu_adam_params_per_s = 6e8;
  const HwProfile mem_half = AtComputeSpeed(hm, 1.0, 0.5);
  EXPECT_DOUBLE_EQ(mem_half.memory_bw, 0.5 * hm.memory_bw);
  EXPECT_DOUBLE_EQ(mem_half.host_mem_bw, 1e10);
  EXPECT_DOUBLE_EQ(mem_half.h2d_bw, 0.5 * hm.h2d_bw);
  EXPECT_DOUBLE_EQ(mem_half.cpu_adam_params_per_s, 3e8);
  EXPECT_DOUBLE_EQ(mem_half.intra_node_bw, 4e9);
  EXPECT_DOUBLE_EQ(mem_half.shm_allgather_cpu_curve[0].y, 8e-5);
  EXPECT_EQ(mem_half.achievable_flops, hm.achievable_flops);
  EXPECT_EQ(mem_half.gemm_curve[1].y, hm.gemm_curve[1].y);
  EXPECT_EQ(mem_half.op_overhead_s, hm.op_overhead_s);
  EXPECT_EQ(mem_half.nvme_cpu_per_request_s, hm.nvme_cpu_per_request_s);
  EXPECT_EQ(mem_half.collective_latency_s, hm.collective_latency_s);
  const HwProfile gemm_half = AtComputeSpeed(hm, 0.5, 1.0);
  EXPECT_DOUBLE_EQ(gemm_half.gemm_curve[1].y, 0.5 * hm.gemm_curve[1].y);
  EXPECT_EQ(gemm_half.host_mem_bw, hm.host_mem_bw);
  EXPECT_EQ(gemm_half.cpu_adam_params_per_s, hm.cpu_adam_params_per_s);
  EXPECT_NE(mem_half.description, AtComputeSpeed(hm, 0.5).description);
  // Four ranks on the cores: each collective takes twice as long at half the speed.
  PlanKnobs k4 = Knobs(m, hw, "none");
  k4.gpus_per_node = 4;
  EXPECT_NEAR(CollectiveTime(slow_coll, k4, 1e7) / CollectiveTime(hw, k4, 1e7), 2.0, 1e-9);
  // A GPU node's collectives run on its links: they keep their speed.
  HwProfile gpu = hw;
  gpu.backend = "cuda";
  const HwProfile gpu_half = AtComputeSpeed(gpu, 0.5);
  EXPECT_EQ(gpu_half.intra_node_bw, gpu.intra_node_bw);
  EXPECT_EQ(gpu_half.collective_latency_s, gpu.collective_latency_s);
  EXPECT_EQ(gpu_half.allgather_curve[1].y, gpu.allgather_curve[1].y);
  EXPECT_DOUBLE_EQ(gpu_half.achievable_flops, 0.5 * gpu.achievable_flops);
  // Everything on the device: the step is the cores' work, twice as long at half the speed.
  PlanKnobs k = Knobs(m, hw, "none");
  k.gpus_per_node = 1;
  k.ckpt_interval = 0;
  const double base = SimulateStep(m, hw, k).step_s, slow = SimulateStep(m, half, k).step_s;
  EXPECT_NEAR(slow / base, 2.0, 1e-6);
  // Parameters on NVMe: the drive's share of the step does not slow down.
  const PlanKnobs kn = AllNvmeFp32(m, hw);
  const SimResult n0 = SimulateStep(m, hw, kn), n1 = SimulateStep(m, half, kn);
  EXPECT_DOUBLE_EQ(Busy(n1, Res::kNvmeRead), Busy(n0, Res::kNvmeRead));
  EXPECT_GT(n1.step_s, n0.step_s);
}

// The drive at other speeds (zplan simulate --nvme-read-speed / --nvme-write-speed): its
// bandwidths and lane curves scale, its latency and the cores' figures do not; a plan with
// everything on NVMe reads for longer when the drive reads slower.
TEST(Simulator, DriveSpeedScalesTheDrivesBandwidthsOnly) {
  ModelSpec m = Gpt(4, 256, 4, 128);
  HwProfile hw = OneDeviceOn2Cores("cpu");
  hw.nvme_read_latency_s = 30e-6;
  hw.nvme_lane_read_curve = {{1 << 16, 1e9}, {1 << 22, 2e9}};
  hw.nvme_lane_write_curve = {{1 << 16, 0.8e9}, {1 << 22, 1.5e9}};
  const HwProfile same = AtDriveSpeed(hw, 1.0, 1.0);
  EXPECT_EQ(same.nvme_read_bw, hw.nvme_read_bw);
  EXPECT_EQ(same.description, hw.description);
  const HwProfile slow = AtDriveSpeed(hw, 0.5, 0.25);
  EXPECT_DOUBLE_EQ(slow.nvme_read_bw, 0.5 * hw.nvme_read_bw);
  EXPECT_DOUBLE_EQ(slow.nvme_read_bw_node, 0.5 * hw.nvme_read_bw_node);
  EXPECT_DOUBLE_EQ(slow.nvme_write_bw, 0.25 * hw.nvme_write_bw);
  EXPECT_DOUBLE_EQ(slow.nvme_write_bw_node, 0.25 * hw.nvme_write_bw_node);
  EXPECT_DOUBLE_EQ(slow.nvme_lane_read_curve[1].y, 0.5 * hw.nvme_lane_read_curve[1].y);
  EXPECT_DOUBLE_EQ(slow.nvme_lane_write_curve[0].y, 0.25 * hw.nvme_lane_write_curve[0].y);
  EXPECT_DOUBLE_EQ(slow.nvme_lane_read_curve[1].x, hw.nvme_lane_read_curve[1].x);
  EXPECT_EQ(slow.nvme_read_latency_s, hw.nvme_read_latency_s);
  EXPECT_EQ(slow.achievable_flops, hw.achievable_flops);
  EXPECT_EQ(slow.h2d_bw, hw.h2d_bw);
  EXPECT_NE(slow.description, hw.description);
  const PlanKnobs kn = AllNvmeFp32(m, hw);
  const SimResult n0 = SimulateStep(m, hw, kn), n1 = SimulateStep(m, slow, kn);
  EXPECT_GT(Busy(n1, Res::kNvmeRead), Busy(n0, Res::kNvmeRead));
  EXPECT_GT(Busy(n1, Res::kNvmeWrite), Busy(n0, Res::kNvmeWrite));
  EXPECT_GT(n1.step_s, n0.step_s);
  // Nothing on NVMe: the drive's speed does not matter.
  PlanKnobs k = Knobs(m, hw, "none");
  EXPECT_DOUBLE_EQ(SimulateStep(m, slow, k).step_s, SimulateStep(m, hw, k).step_s);
}

// CPU backend: every NVMe read request (a group's shard fetched, an optimizer state read)
// waits the measured read latency on the NVMe queue, besides its bytes at the bandwidth.
TEST(Simulator, CpuNvmeReadsPayTheirLatency) {
  ModelSpec m = Gpt(4, 256, 4, 128);
  for (const char* backend : {"cpu", "cuda"}) {
    HwProfile hw = OneDeviceOn2Cores(backend);
    const PlanKnobs k = AllNvmeFp32(m, hw);
    SimOptions keep;
    keep.keep_tasks = true;
    auto reads = [&](const SimResult& r) {
      double s = 0;
      for (const SimTask& t : r.tasks)
        if (t.res == Res::kNvmeRead) s += t.dur_s;
      return s;
    };
    const SimResult r0 = SimulateStep(m, hw, k, keep);
    TimeEstimate t0 = EstimateTime(m, hw, k);
    hw.nvme_read_latency_s = 1e-3;
    const SimResult r1 = SimulateStep(m, hw, k, keep);
    TimeEstimate t1 = EstimateTime(m, hw, k);
    if (std::string(backend) != "cpu") {
      EXPECT_EQ(reads(r1), reads(r0));
      EXPECT_EQ(t1.step_s, t0.step_s);
      continue;
    }
    // Per group: 2 param reads (forward, backward) and the optimizer's reads of p, g, m, v.
    const double groups = static_cast<double>(ParamGroups(BuildForwardOps(m, hw, k, false)));
    EXPECT_NEAR(reads(r1) - reads(r0), 6 * groups * 1e-3, 1e-9);
    EXPECT_NEAR(t1.busy_s["nvme_read"] - t0.busy_s["nvme_read"], 6 * groups * 1e-3, 1e-9);
    EXPECT_GT(r1.step_s, r0.step_s);
    // With the cores busy (the profile's second figure) every read pays that one instead.
    hw.nvme_read_latency_busy_s = 3e-3;
    const SimResult r2 = SimulateStep(m, hw, k, keep);
    TimeEstimate t2 = EstimateTime(m, hw, k);
    EXPECT_NEAR(reads(r2) - reads(r0), 6 * groups * 3e-3, 1e-9);
    EXPECT_NEAR(t2.busy_s["nvme_read"] - t0.busy_s["nvme_read"], 6 * groups * 3e-3, 1e-9);
    hw.nvme_read_latency_busy_s = 0;
  }
}

// With the profile's NVMe lane curves every NVMe transfer (a fetched shard, a gradient shard,
// a group's optimizer arrays) takes the lane's measured time for its size, the node's ranks'
// transfers served as one, not the bandwidths plus a latency per request; both models agree.
TEST(Simulator, NvmeTransfersFollowTheLaneCurves) {
  ModelSpec m = Gpt(4, 256, 4, 128);
  HwProfile hw = OneDeviceOn2Cores("cpu");
  const PlanKnobs k = AllNvmeFp32(m, hw);
  SimOptions keep;
  keep.keep_tasks = true;
  auto io = [&](const SimResult& r, Res res, const char* phase) {
    double s = 0;
    for (const SimTask& t : r.tasks)
      if (t.res == res && std::string(t.phase) == phase) s += t.dur_s;
    return s;
  };
  auto optimizer_io = [&](const SimResult& r, Res res) { return io(r, res, "optimizer"); };
  const StateBytes sb = StateBytesFor(k.dtype, k.accounting);
  const double rbpp = OptimizerNvmeBytesPerParam(k, sb, true), wbpp = OptimizerNvmeBytesPerParam(k, sb, false);
  ASSERT_GT(rbpp, 0);
  ASSERT_GT(wbpp, 0);
  EXPECT_EQ(ShardsLaneSeconds(m, hw, k, rbpp, false), 0.0);  // no curves: not modelled this way
  // Flat curves from 1 byte: a group's transfer is its bytes at that rate, whatever its size.
  hw.nvme_lane_read_curve = {{1, 1e9}, {1e9, 1e9}};
  hw.nvme_lane_write_curve = {{1, 5e8}, {1e9, 5e8}};
  const std::vector<Op> ops = BuildForwardOps(m, hw, k, false);
  double shard = 0;
  for (const Op& op : ops)
    if (op.params > 0) shard += std::ceil(op.params / static_cast<double>(k.dp()));
  const double rd = ShardsLaneSeconds(m, hw, k, rbpp, false), wr = ShardsLaneSeconds(m, hw, k, wbpp, true);
  EXPECT_NEAR(rd, rbpp * shard / 1e9, 1e-12);
  EXPECT_NEAR(wr, wbpp * shard / 5e8, 1e-12);
  const SimResult r = SimulateStep(m, hw, k, keep);
  // The CPU optimizer moves the executor's groups, each shard padded to 1024 floats.
  double padded = 0;
  for (double e : ExecutorGroupShards(m, k.seq_len, k.tile_factor, k.dp())) padded += e;
  ASSERT_GE(padded, CountParams(m).total / static_cast<double>(k.dp()));  // every parameter once (the head is tied)
  EXPECT_NEAR(optimizer_io(r, Res::kNvmeRead), rbpp * padded / 1e9, 1e-9);
  EXPECT_NEAR(optimizer_io(r, Res::kNvmeWrite), wbpp * padded / 5e8, 1e-9);
  // The passes: each fetched shard (fp32) read, each gradient shard written, the same way.
  EXPECT_NEAR(io(r, Res::kNvmeRead, "forward"), 4 * shard / 1e9, 1e-9);
  EXPECT_NEAR(io(r, Res::kNvmeRead, "backward"), 4 * shard / 1e9, 1e-9);
  EXPECT_NEAR(io(r, Res::kNvmeWrite, "backward"), sb.grad * shard / 5e8, 1e-9);
  EXPECT_NEAR(ShardsLaneSeconds(m, hw, k, 4, false), 4 * shard / 1e9, 1e-12);
  // The analytic model's reads and writes are the same figures.
  TimeEstimate t = EstimateTime(m, hw, k);
  EXPECT_NEAR(t.busy_s["nvme_read"], 2 * 4 * shard / 1e9 + rd, 1e-9);
  EXPECT_NEAR(t.busy_s["nvme_write"], sb.grad * shard / 5e8 + wr, 1e-9);
  const double passes_read = t.busy_s["nvme_read"] - rd;
  hw.nvme_lane_read_curve = {{1, 2e9}, {1e9, 2e9}};  // twice the rate: half the reads
  EXPECT_NEAR(EstimateTime(m, hw, k).busy_s["nvme_read"], (passes_read + rd) / 2, 1e-9);
  EXPECT_NEAR(optimizer_io(SimulateStep(m, hw, k, keep), Res::kNvmeRead), rbpp * padded / 2e9, 1e-9);
  // Below the curve's first point a transfer takes that point's time (a latency): every
  // group then costs the same. Four ranks on the node move theirs at once: as one transfer.
  hw.nvme_lane_read_curve = {{1e9, 1e9}, {2e9, 1e9}};
  const double groups = static_cast<double>(ParamGroups(ops));
  EXPECT_NEAR(ShardsLaneSeconds(m, hw, k, rbpp, false), groups * 1.0, 1e-9);
  hw.nvme_lane_read_curve = {{1, 1e9}, {1e9, 1e9}};
  PlanKnobs k4 = k;
  k4.gpus_per_node = 4;
  k4.placement = k.placement;
  double shard4 = 0;
  for (const Op& op : BuildForwardOps(m, hw, k4, false))
    if (op.params > 0) shard4 += std::ceil(op.params / static_cast<double>(k4.dp()));
  EXPECT_NEAR(ShardsLaneSeconds(m, hw, k4, rbpp, false), 4 * rbpp * shard4 / 1e9, 1e-12);
}

// CPU backend, states on NVMe: the optimizer runs the executor's groups in its order (group
// g+1's read issued before g's write), a group under 2^20 elements on one thread fewer, and
// with the lane-Adam coupling measured the two slow each other where they overlap.
TEST(Simulator, CpuOptimizerRunsTheExecutorsGroupsBesideTheLane) {
  ModelSpec m = Gpt(2, 512, 8, 128);  // fc and mlp.proj groups of 2^20 elements or more, the rest under
  HwProfile hw = OneDeviceOn2Cores("cpu");
  hw.nvme_lane_read_curve = {{1, 1e9}, {1e9, 1e9}};
  hw.nvme_lane_write_curve = {{1, 5e8}, {1e9, 5e8}};
  hw.cpu_adam_params_per_s = 1e9;
  hw.kernel_launch_s = 0;
  const PlanKnobs k = AllNvmeFp32(m, hw);
  SimOptions keep;
  keep.keep_tasks = true;
  auto sum = [](const SimResult& r, const char* name) {
    double s = 0;
    for (const SimTask& t : r.tasks)
      if (t.name == name) s += t.dur_s;
    return s;
  };
  const std::vector<double> shards = ExecutorGroupShards(m, k.seq_len, k.tile_factor, k.dp());
  double adam = 0;
  for (double e : shards) adam += e / 1e9 * (e < (1 << 20) ? 2.0 : 1.0);
  ASSERT_TRUE(std::any_of(shards.begin(), shards.end(), [](double e) { return e >= (1 << 20); }));
  const SimResult r = SimulateStep(m, hw, k, keep);
  int adams = 0;
  for (const SimTask& t : r.tasks) adams += t.name == "cpu adam";
  EXPECT_EQ(adams, static_cast<int>(shards.size()));
  EXPECT_NEAR(sum(r, "cpu adam"), adam, 1e-12);
  EXPECT_EQ(sum(r, "lane beside adam"), 0.0);  // not measured: each as if alone
  // The lane order: read 0, read 1, write 0, read 2, write 1, ...
  std::vector<const SimTask*> lane;
  for (const SimTask& t : r.tasks)
    if (t.name == "optimizer states read" || t.name == "optimizer states write") lane.push_back(&t);
  std::stable_sort(lane.begin(), lane.end(), [](const SimTask* a, const SimTask* b) { return a->start_s < b->start_s; });
  ASSERT_GE(lane.size(), 4u);
  EXPECT_EQ(lane[0]->name, "optimizer states read");
  EXPECT_EQ(lane[1]->name, "optimizer states read");
  EXPECT_EQ(lane[2]->name, "optimizer states write");
  EXPECT_EQ(lane[3]->name, "optimizer states read");
  // Adam overlaps the lane: the optimizer takes less than both end to end, no less than either.
  const double io = sum(r, "optimizer states read") + sum(r, "optimizer states write") + sum(r, "param write nvme");
  EXPECT_LT(r.optimizer_s, io + adam - 1e-6);
  EXPECT_GE(r.optimizer_s, std::max(io, adam) - 1e-12);

  // Coupling factors of 1: measured, and nothing changes.
  HwProfile one = hw;
  one.nvme_lane_read_beside_adam = one.nvme_lane_write_beside_adam = one.nvme_adam_beside_lane = 1.0;
  ASSERT_TRUE(one.HasLaneAdamCoupling());
  EXPECT_NEAR(SimulateStep(m, one, k).step_s, r.step_s, 1e-12);
  // Slower beside each other: Adam within its factor of alone, the lane's additions on its
  // queue, the step longer.
  HwProfile slow = hw;
  slow.nvme_lane_read_beside_adam = 1.5;
  slow.nvme_lane_write_beside_adam = 2.0;
  slow.nvme_adam_beside_lane = 1.5;
  const SimResult c = SimulateStep(m, slow, k, keep);
  EXPECT_GT(sum(c, "cpu adam"), adam * 1.01);
  EXPECT_LE(sum(c, "cpu adam"), adam * 1.5 + 1e-12);
  EXPECT_GT(sum(c, "lane beside adam"), 0.0);
  for (const SimTask& t : c.tasks)
    if (t.name == "lane beside adam") EXPECT_EQ(t.res, Res::kNvmeWrite);
  EXPECT_GT(c.step_s, r.step_s);
  EXPECT_NEAR(c.forward_s + c.backward_s, r.forward_s + r.backward_s, 1e-12);  // the passes are untouched
  // Other backends keep their sub-group pipeline: no coupling, Adam at the node's rate.
  HwProfile gpu = slow;
  gpu.backend = "cuda";
  EXPECT_EQ(sum(SimulateStep(m, gpu, k, keep), "lane beside adam"), 0.0);
}

// CPU backend: the reduce lane's copy of each gradient shard beside the reduce-scatter and
// the offload (grads on the device: the scaled write; one rank reads the gathered gradient
// itself, with no copy before) runs on the cores at the single-thread copy rate.
TEST(Simulator, CpuGradHandOffCopiesQueueWithCompute) {
  ModelSpec m = Gpt(4, 256, 4, 128);
  HwProfile hw = TwoCoreCpu();
  struct Case {
    const char* strategy;
    int64_t ranks;
    double copies;
  };
  for (const Case& c : {Case{"none", 1, 1}, Case{"opt:host", 1, 0}, Case{"none", 2, 1}, Case{"opt:host", 2, 0}}) {
    PlanKnobs k = Knobs(m, hw, c.strategy);
    k.gpus_per_node = c.ranks;
    k.grad_accum = 1;
    SimOptions keep;
    keep.keep_tasks = true;
    double hand_off = 0;
    for (const SimTask& t : SimulateStep(m, hw, k, keep).tasks)
      if (t.name == "grad hand-off") hand_off += t.dur_s;
    // Every op with parameters hands its gradient off (the tied head's too: the embedding
    // group gets two contributions).
    double params = 0;
    for (const Op& op : BuildForwardOps(m, hw, k, false)) params += op.params;
    const double shard = StateBytesFor(k.dtype, k.accounting).grad * params / static_cast<double>(k.dp());
    const double want = c.copies * shard / hw.h2d_bw / CpuRankShare(hw, k);
    EXPECT_NEAR(hand_off, want, 1e-9 * std::max(want, 1.0)) << c.strategy << " x" << c.ranks;
    EXPECT_NEAR(GradHandOffTime(hw, k, shard), want, 1e-12) << c.strategy << " x" << c.ranks;
  }
  hw.backend = "cuda";
  EXPECT_EQ(GradHandOffTime(hw, Knobs(m, hw, "none"), 1e9), 0.0);
}

// CPU backend, more ranks than cores: every collective (forward, recompute and backward
// allgathers, reduce-scatters) pays node.coupling_curve at the compute between collectives;
// with no more ranks than cores, or without the curve, nothing.
TEST(Simulator, CpuCouplingAddsToEveryCollectiveWhenRanksOutnumberCores) {
  ModelSpec m = Gpt(4, 256, 4, 128);
  HwProfile hw = TwoCoreCpu();
  PlanKnobs k = FourRanksOnTwoCores(m, hw);
  k.ckpt_interval = 2;  // layers 0-1 recomputed: their ops gather a third time
  const std::vector<Op> ops = BuildForwardOps(m, hw, k, false);
  double groups = 0, recomputed = 0, compute = 0;
  for (const Op& op : ops) {
    const bool rec = op.in_block && op.layer < RecomputedLayers(m, k);
    compute += op.fwd_s + op.bwd_s + (rec ? op.fwd_s : 0);
    if (op.params <= 0) continue;
    groups += 1;
    recomputed += rec ? 1 : 0;
  }
  ASSERT_GT(recomputed, 0);
  const double n = 3 * groups + recomputed;
  EXPECT_DOUBLE_EQ(CollectivesPerMicroStep(m, k, ops), n);
  const double between = compute / n;
  // A curve whose value at `between` is known: flat 40 us below it, 80 us above it.
  hw.coupling_curve = {{between / 4, 40e-6}, {between * 4, 80e-6}};
  const double per = 60e-6;  // log-linear halfway
  EXPECT_NEAR(CouplingPerCollective(m, hw, k, ops), per, 1e-12);
  SimOptions keep;
  keep.keep_tasks = true;
  auto network = [&](const HwProfile& h, const PlanKnobs& kk) {
    double s = 0, count = 0;
    for (const SimTask& t : SimulateStep(m, h, kk, keep).tasks)
      if (t.res == Res::kNetwork) s += t.dur_s, count += 1;
    EXPECT_EQ(count, n);
    return s;
  };
  HwProfile flat = hw;
  flat.coupling_curve.clear();
  EXPECT_NEAR(network(hw, k) - network(flat, k), n * per, 1e-9);
  EXPECT_NEAR(EstimateTime(m, hw, k).busy_s.at("network") - EstimateTime(m, flat, k).busy_s.at("network"), n * per, 1e-9);
  PlanKnobs two = k;  // as many ranks as cores: no coupling cost
  two.gpus_per_node = 2;
  EXPECT_EQ(CouplingPerCollective(m, hw, two, BuildForwardOps(m, hw, two, false)), 0.0);
  EXPECT_NEAR(network(hw, two), network(flat, two), 1e-12);
}

// More ranks than cores: each collective carries the CPU its network lane spends on it (the
// shm _cpu_ curve back to back plus the _cpu_beside_ extra), reported beside its time and in
// the trace, not scheduled: the step does not move. Elsewhere, or without the curves, none.
TEST(Simulator, CpuCollectivesCarryTheirLaneCpuWhenRanksOutnumberCores) {
  ModelSpec m = Gpt(4, 256, 4, 128);
  HwProfile hw = TwoCoreCpu();
  PlanKnobs k = FourRanksOnTwoCores(m, hw);
  hw.shm_allgather_curve = {{1e5, 1e9}, {1e7, 3e9}};
  hw.shm_reduce_scatter_curve = {{1e5, 8e8}, {1e7, 2e9}};
  hw.shm_allgather_cpu_beside_curve = {{1e6, 5e-6}};  // in the collectives' time already
  SimOptions keep;
  keep.keep_tasks = true;
  const SimResult without = SimulateStep(m, hw, k, keep);
  for (const SimTask& t : without.tasks) EXPECT_EQ(t.cpu_s, 0.0) << t.name;
  hw.shm_allgather_cpu_curve = {{1e5, 10e-6}, {1e7, 400e-6}};
  hw.shm_reduce_scatter_cpu_curve = {{1e5, 20e-6}, {1e7, 900e-6}};
  const SimResult with = SimulateStep(m, hw, k, keep);
  EXPECT_DOUBLE_EQ(with.step_s, without.step_s);
  const double w = DtypeBytes(k.dtype);
  int gathers = 0, scatters = 0;
  for (const SimTask& t : with.tasks) {
    if (t.res != Res::kNetwork) {
      EXPECT_EQ(t.cpu_s, 0.0) << t.name;
      continue;
    }
    const bool rs = t.name.find("reduce-scatter") != std::string::npos;
    (rs ? scatters : gathers) += 1;
    EXPECT_GT(t.cpu_s, 0.0) << t.name;
    EXPECT_LT(t.cpu_s, t.dur_s) << t.name;  // the lane's CPU, not the collective's time
  }
  EXPECT_GT(gathers, 0);
  EXPECT_GT(scatters, 0);
  // The first group's figures against the curves directly.
  const std::vector<Op> ops = BuildForwardOps(m, hw, k, true);
  const auto op = std::find_if(ops.begin(), ops.end(), [](const Op& o) { return o.params > 0; });
  ASSERT_NE(op, ops.end());
  const double bytes = w * op->params;
  EXPECT_DOUBLE_EQ(CollectiveCpuTime(hw, k, bytes, false), hw.ShmCpuSeconds(bytes, false) + hw.ShmCpuBesideSeconds(bytes, false));
  EXPECT_DOUBLE_EQ(CollectiveCpuTime(hw, k, bytes, true), hw.ShmCpuSeconds(bytes, true));
  bool found = false;
  for (const SimTask& t : with.tasks)
    if (t.name == op->name + " allgather") {
      EXPECT_DOUBLE_EQ(t.cpu_s, CollectiveCpuTime(hw, k, bytes, false));
      found = true;
    }
  EXPECT_TRUE(found) << op->name;
  // The trace carries it as zrun's events carry theirs.
  const std::string path = ::testing::TempDir() + "/zinf-sim-cpu-trace.json";
  ASSERT_TRUE(WriteSimTrace(with, path).ok());
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  std::remove(path.c_str());
  EXPECT_NE(text.str().find("\"cpu_us\""), std::string::npos);
  // As many ranks as cores, or several nodes: none.
  PlanKnobs two = k;
  two.gpus_per_node = 2;
  EXPECT_EQ(CollectiveCpuTime(hw, two, 1e6, false), 0.0);
  for (const SimTask& t : SimulateStep(m, hw, two, keep).tasks) EXPECT_EQ(t.cpu_s, 0.0) << t.name;
  PlanKnobs nodes = k;
  nodes.nodes = 2;
  EXPECT_EQ(CollectiveCpuTime(hw, nodes, 1e6, false), 0.0);
}

// The coupling a collective pays depends on the fetch chain it waits behind: parameters on
// the host take node.coupling_curve_host, on NVMe node.coupling_curve_nvme; a chain whose curve
// was not measured takes the longest measured one below it.
TEST(Simulator, CpuCouplingFollowsTheParametersFetchChain) {
  ModelSpec m = Gpt(4, 256, 4, 128);
  HwProfile hw = TwoCoreCpu();
  PlanKnobs k = FourRanksOnTwoCores(m, hw);
  hw.coupling_curve = {{1e-6, 40e-6}, {1.0, 40e-6}};
  hw.coupling_curve_host = {{1e-6, 90e-6}, {1.0, 90e-6}};
  hw.coupling_curve_nvme = {{1e-6, 300e-6}, {1.0, 300e-6}};
  auto coupling = [&](const HwProfile& h, Tier params) {
    PlanKnobs kk = k;
    kk.placement.params = params;
    return CouplingPerCollective(m, h, kk, BuildForwardOps(m, h, kk, false));
  };
  EXPECT_NEAR(coupling(hw, Tier::kDevice), 40e-6, 1e-12);
  EXPECT_NEAR(coupling(hw, Tier::kHost), 90e-6, 1e-12);
  EXPECT_NEAR(coupling(hw, Tier::kNvme), 300e-6, 1e-12);
  HwProfile no_nvme = hw;  // a profile without the NVMe chain: NVMe params pay the host chain's
  no_nvme.coupling_curve_nvme.clear();
  EXPECT_NEAR(coupling(no_nvme, Tier::kNvme), 90e-6, 1e-12);
  HwProfile only_base = no_nvme;  // an older profile: one curve for every chain
  only_base.coupling_curve_host.clear();
  EXPECT_NEAR(coupling(only_base, Tier::kNvme), 40e-6, 1e-12);
  EXPECT_NEAR(coupling(only_base, Tier::kHost), 40e-6, 1e-12);
  // The simulator charges it on each collective: NVMe params' step is longer by the difference.
  PlanKnobs nv = k;
  nv.placement.params = Tier::kNvme;
  EXPECT_GT(SimulateStep(m, hw, nv, {}).step_s, SimulateStep(m, no_nvme, nv, {}).step_s);
  EXPECT_DOUBLE_EQ(SimulateStep(m, hw, k, {}).step_s, SimulateStep(m, no_nvme, k, {}).step_s);
}

// CPU backend, no more ranks than cores, params off the device: every parameter fetch (forward,
// backward, the recompute's) pays node.fetch_wake_curve_host (params on the host) or _nvme at
// the compute between the micro-step's lane hand-offs (fetches and gradient hand-offs), on the
// cores with the fetch's copy; every gradient hand-off pays the host curve (one hop, the comm
// lane) on the cores; the analytic model adds the same to the compute. Params on the device:
// only the gradients'. More ranks than cores, or no curve: nothing.
TEST(Simulator, CpuFetchWakeAddsToEveryFetchOnTheCores) {
  ModelSpec m = Gpt(4, 256, 4, 128);
  HwProfile hw = TwoCoreCpu();
  PlanKnobs k = Knobs(m, hw, "none");
  k.grad_accum = 1;
  k.ckpt_interval = 2;  // layers 0-1 recomputed: their ops are fetched a third time
  k.placement.params = Tier::kHost;
  k.placement.grads = Tier::kHost;
  k.placement.optimizer = Tier::kHost;
  const std::vector<Op> ops = BuildForwardOps(m, hw, k, false);
  double fetches = 0, grads = 0, compute = 0;
  for (const Op& op : ops) {
    const bool rec = op.in_block && op.layer < RecomputedLayers(m, k);
    compute += op.fwd_s + op.bwd_s + (rec ? op.fwd_s : 0);
    if (op.params > 0) fetches += rec ? 3 : 2;
    if (op.params > 0) grads += 1;
  }
  EXPECT_DOUBLE_EQ(ParamFetchesPerMicroStep(m, k, ops), fetches);
  EXPECT_DOUBLE_EQ(GradHandOffsPerMicroStep(m, k, ops), grads);
  const double between = compute / (fetches + grads);
  hw.fetch_wake_curve_host = {{between / 4, 20e-6}, {between * 4, 40e-6}};
  hw.fetch_wake_curve_nvme = {{between / 4, 100e-6}, {between * 4, 100e-6}};
  EXPECT_NEAR(FetchWakePerFetch(m, hw, k, ops), 30e-6, 1e-12);  // log-linear halfway
  EXPECT_NEAR(GradWakePerHandOff(m, hw, k, ops), 30e-6, 1e-12);  // the host curve
  HwProfile none = hw;
  none.fetch_wake_curve_host.clear();
  none.fetch_wake_curve_nvme.clear();
  SimOptions keep;
  keep.keep_tasks = true;
  auto h2d = [&](const HwProfile& h, const PlanKnobs& kk) {
    double s = 0, count = 0;
    for (const SimTask& t : SimulateStep(m, h, kk, keep).tasks)
      if (t.res == Res::kH2D && t.phase != std::string("optimizer")) s += t.dur_s, count += 1;
    EXPECT_EQ(count, fetches);
    return s;
  };
  EXPECT_NEAR(h2d(hw, k) - h2d(none, k), fetches * 30e-6, 1e-9);
  EXPECT_NEAR(EstimateTime(m, hw, k).busy_s.at("compute") - EstimateTime(m, none, k).busy_s.at("compute"),
              (fetches + grads) * 30e-6, 1e-9);
  // The copies queue with compute here, so the step grows by the hand-offs (nothing else moves).
  EXPECT_NEAR(SimulateStep(m, hw, k, {}).step_s - SimulateStep(m, none, k, {}).step_s, (fetches + grads) * 30e-6, 1e-9);
  PlanKnobs nv = k;  // params on NVMe: the NVMe chain's curve
  nv.placement.params = Tier::kNvme;
  EXPECT_NEAR(FetchWakePerFetch(m, hw, nv, BuildForwardOps(m, hw, nv, false)), 100e-6, 1e-12);
  EXPECT_NEAR(GradWakePerHandOff(m, hw, nv, BuildForwardOps(m, hw, nv, false)), 30e-6, 1e-12);
  PlanKnobs dev = k;  // params on the device: no fetch chain; the gradients' hand-offs alone,
  dev.placement.params = Tier::kDevice;  // at the compute between them
  const std::vector<Op> dops = BuildForwardOps(m, hw, dev, false);
  EXPECT_EQ(FetchWakePerFetch(m, hw, dev, dops), 0.0);
  HwProfile dhw = hw;
  double dcompute = 0;
  for (const Op& op : dops) dcompute += op.fwd_s + op.bwd_s + (op.in_block && op.layer < RecomputedLayers(m, dev) ? op.fwd_s : 0);
  dhw.fetch_wake_curve_host = {{dcompute / grads / 2, 10e-6}, {dcompute / grads * 2, 10e-6}};
  EXPECT_NEAR(GradWakePerHandOff(m, dhw, dev, dops), 10e-6, 1e-12);
  EXPECT_NEAR(Busy(SimulateStep(m, dhw, dev, {}), Res::kCompute) - Busy(SimulateStep(m, none, dev, {}), Res::kCompute),
              grads * 10e-6, 1e-9);
  EXPECT_NEAR(SimulateStep(m, dhw, dev, {}).step_s - SimulateStep(m, none, dev, {}).step_s, grads * 10e-6, 1e-9);
  PlanKnobs four = k;  // more ranks than cores: the coupling curves model it instead
  four.gpus_per_node = 4;
  EXPECT_EQ(FetchWakePerFetch(m, hw, four, BuildForwardOps(m, hw, four, false)), 0.0);
  EXPECT_EQ(GradWakePerHandOff(m, hw, four, BuildForwardOps(m, hw, four, false)), 0.0);
  HwProfile gpu = hw;  // a GPU's lanes have host cores of their own
  gpu.backend = "cuda";
  EXPECT_EQ(FetchWakePerFetch(m, gpu, k, BuildForwardOps(m, gpu, k, false)), 0.0);
  EXPECT_EQ(GradWakePerHandOff(m, gpu, k, BuildForwardOps(m, gpu, k, false)), 0.0);
}

TEST(Simulator, PrefetchHidesFetches) {
  HwProfile hw = Dgx2();
  ModelSpec m = Gpt(24, 2048, 16);
  PlanKnobs k = Knobs(m, hw, "params+opt:nvme");
  PlanKnobs none = k;
  none.prefetch_nvme = none.prefetch_h2d = none.prefetch_allgather = 0;
  SimResult with = SimulateStep(m, hw, k), without = SimulateStep(m, hw, none);
  EXPECT_LT(with.step_s, without.step_s);
  // Without prefetch every fetch is serialised with compute: at least their sum per pass.
  EXPECT_GE(without.step_s, Busy(without, Res::kCompute) + Busy(without, Res::kNvmeRead) * 0.99);
}

TEST(Simulator, AgreesWithAnalyticWhenComputeBound) {
  HwProfile hw = Dgx2();
  ModelSpec m = Gpt(24, 2048, 16);
  PlanKnobs k = Knobs(m, hw, "opt:host", 1);
  k.micro_batch = 16;
  SimResult r = SimulateStep(m, hw, k);
  TimeEstimate te = EstimateTime(m, hw, k);
  EXPECT_NEAR(r.step_s, te.step_s, 0.15 * te.step_s);
}

TEST(Simulator, CriticalPathAndTasks) {
  HwProfile hw = Dgx2();
  ModelSpec m = Gpt(4, 512, 8, 256);
  PlanKnobs k = Knobs(m, hw, "params+opt:nvme", 1);
  k.ckpt_tier = Tier::kHost;
  SimOptions o;
  o.keep_tasks = true;
  SimResult r = SimulateStep(m, hw, k, o);
  ASSERT_FALSE(r.tasks.empty());
  ASSERT_FALSE(r.critical_path.empty());
  // The path ends at the last task and is contiguous in time: each starts no earlier than
  // its predecessor's start.
  EXPECT_DOUBLE_EQ(r.tasks[static_cast<size_t>(r.critical_path.back())].end_s, r.step_s);
  for (size_t i = 1; i < r.critical_path.size(); ++i)
    EXPECT_GE(r.tasks[static_cast<size_t>(r.critical_path[i])].start_s, r.tasks[static_cast<size_t>(r.critical_path[i - 1])].start_s);
  bool saw_ckpt = false;
  for (const SimTask& t : r.tasks) {
    EXPECT_GE(t.end_s, t.start_s);
    if (t.name == "checkpoint d2h") saw_ckpt = true;
  }
  EXPECT_TRUE(saw_ckpt);
  // keep_tasks only changes what is kept, not the timeline.
  EXPECT_DOUBLE_EQ(SimulateStep(m, hw, k).step_s, r.step_s);
}

// The executor recomputes every checkpointed segment but the last (still live in backward).
TEST(Checkpointing, LastSegmentIsNotRecomputed) {
  ModelSpec m = Gpt(8, 512, 8);
  PlanKnobs k;
  k.ckpt_interval = 0;
  EXPECT_EQ(RecomputedLayers(m, k), 0);
  EXPECT_EQ(SavedCheckpoints(m, k), 0);
  k.ckpt_interval = 8;  // one segment: nothing to checkpoint
  EXPECT_EQ(RecomputedLayers(m, k), 0);
  k.ckpt_interval = 4;
  EXPECT_EQ(RecomputedLayers(m, k), 4);
  EXPECT_EQ(SavedCheckpoints(m, k), 1);
  k.ckpt_interval = 3;  // segments 0-2, 3-5, 6-7
  EXPECT_EQ(RecomputedLayers(m, k), 6);
  EXPECT_EQ(SavedCheckpoints(m, k), 2);
  k.ckpt_interval = 1;
  EXPECT_EQ(RecomputedLayers(m, k), 7);
}

TEST(Checkpointing, SimulatorRecomputesWhatTheAnalyticModelCounts) {
  HwProfile hw = Dgx2();
  ModelSpec m = Gpt(8, 2048, 16);
  PlanKnobs k = Knobs(m, hw, "none");
  k.gpus_per_node = 1;
  k.ckpt_interval = 0;
  const double none = SimulateStep(m, hw, k).busy_s[static_cast<size_t>(Res::kCompute)];
  k.ckpt_interval = 4;
  const double half = SimulateStep(m, hw, k).busy_s[static_cast<size_t>(Res::kCompute)];
  k.ckpt_interval = 2;
  const double three_quarters = SimulateStep(m, hw, k).busy_s[static_cast<size_t>(Res::kCompute)];
  // Recompute of 4 and of 6 of 8 layers' forward: the second adds 1.5x the first's extra.
  EXPECT_GT(half, none);
  EXPECT_NEAR(three_quarters - none, 1.5 * (half - none), 1e-9 * none);
  k.ckpt_interval = 4;
  EXPECT_NEAR(half, EstimateTime(m, hw, k).busy_s["compute"], 1e-9 * half);
}

// Recompute tasks carry their own phase, as zrun's measured trace labels them: one forward
// of the recomputed layers' ops, none of the last segment's.
TEST(Checkpointing, RecomputeHasItsOwnPhase) {
  HwProfile hw = Dgx2();
  ModelSpec m = Gpt(4, 1024, 16);
  PlanKnobs k = Knobs(m, hw, "none");
  k.gpus_per_node = 1;
  k.ckpt_interval = 2;  // layers 0-1 recomputed, 2-3 not
  SimOptions o;
  o.keep_tasks = true;
  const SimResult r = SimulateStep(m, hw, k, o);
  int fwd_qkv = 0, re_qkv0 = 0, re_qkv2 = 0;
  double re_s = 0;
  for (const SimTask& t : r.tasks) {
    if (t.phase == "forward" && t.name == "h0.attn.qkv") ++fwd_qkv;
    if (t.phase == "recompute" && t.name == "h0.attn.qkv") ++re_qkv0;
    if (t.phase == "recompute" && t.name == "h2.attn.qkv") ++re_qkv2;
    if (t.phase == "recompute" && t.res == Res::kCompute) re_s += t.dur_s;
  }
  EXPECT_EQ(fwd_qkv, 1);
  EXPECT_EQ(re_qkv0, 1);
  EXPECT_EQ(re_qkv2, 0);
  // The recompute phase's compute is exactly what checkpointing adds.
  const double with = r.busy_s[static_cast<size_t>(Res::kCompute)];
  k.ckpt_interval = 0;
  const double without = SimulateStep(m, hw, k).busy_s[static_cast<size_t>(Res::kCompute)];
  EXPECT_GT(re_s, 0);
  EXPECT_NEAR(re_s, with - without, 1e-9 * with);
}

// Measured attention forward and backward split the profiled forward + backward time.
TEST(OpGraph, AttentionSplitFollowsTheForwardCurve) {
  HwProfile hw = Dgx2();
  ModelSpec m = Gpt(2, 1024, 16);
  PlanKnobs k = Knobs(m, hw, "none");
  hw.attention_curve = {{1e3, 3e12}, {1e12, 3e12}};  // forward + backward: 3 x F / 3e12 = F / 1e12
  auto att = [&](const std::vector<Op>& ops) {
    for (const Op& op : ops)
      if (op.name == "h0.attn.core") return op;
    return Op{};
  };
  Op even = att(BuildForwardOps(m, hw, k));
  EXPECT_NEAR(even.bwd_s, 2.0 * even.fwd_s, 1e-12);  // no forward curve: backward = 2 x forward
  hw.attention_fwd_curve = {{1e3, 2e12}, {1e12, 2e12}};  // forward alone at 2e12: half the total
  Op split = att(BuildForwardOps(m, hw, k));
  EXPECT_NEAR(split.fwd_s, split.bwd_s, 1e-12);
  EXPECT_NEAR(split.fwd_s + split.bwd_s, even.fwd_s + even.bwd_s, 1e-12);
}

}  // namespace
}  // namespace zinf
