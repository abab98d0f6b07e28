// The forward op sequence of one micro-step as the executor runs it: each op with the
// parameters it gathers (a ZeRO-3 fetch unit) and its compute time at the profiled rates.
// Shared by the analytic model (sums) and the simulator (one task per op).
#pragma once

#include <string>
#include <vector>

#include "core/hw_profile.h"
#include "core/model_spec.h"
#include "core/plan.h"

namespace zinf {

struct Op {
  std::string name;    // "h3.mlp.fc.tile1"
  int layer = -1;      // -1 for embedding / head
  double params = 0;   // elements gathered for this op (0: no fetch)
  double fwd_s = 0;    // forward compute seconds
  double bwd_s = 0;    // backward compute seconds
  bool in_block = false;  // recomputed under activation checkpointing
  bool layer_start = false;  // first op of its block (checkpoint boundary)
};

// Layers whose forward runs again in backward under activation checkpointing: the executor
// recomputes every segment but the last, whose activations are still live when backward
// starts (executor/model/gpt.cc). 0 without checkpointing (an interval >= n_layer is none).
int64_t RecomputedLayers(const ModelSpec& m, const PlanKnobs& k);
// Segment inputs saved as checkpoints (written in forward, read back in backward).
int64_t SavedCheckpoints(const ModelSpec& m, const PlanKnobs& k);

// with_names=false leaves Op::name empty (hot paths).
// The fraction of the profiled device one rank gets: 1 on GPUs; on the CPU backend, where the
// profile measured the whole CPU, hw.gpus_per_node / ranks per node when more ranks share it.
double CpuRankShare(const HwProfile& hw, const PlanKnobs& k);
// CPU backend with more ranks per node than cores: the coupling probe's case (its curves apply).
bool CpuOversubscribed(const HwProfile& hw, const PlanKnobs& k);
// CPU backend: the optimizer step's parallel-kernel launches (device.kernel_launch_s), one per
// parameter group whose shard is large enough for AdamStep to run in parallel
// (Zero3Engine::OptimizerStep updates group by group); 0 elsewhere.
double AdamLaunchTime(const ModelSpec& m, const HwProfile& hw, const PlanKnobs& k);
// One rank's NVMe bandwidth: the profile's per-GPU figure, but no more than the node's drives
// divided among the plan's ranks per node (4 ranks on a 1-device CPU profile share its drive).
double NvmeReadBwPerRank(const HwProfile& hw, const PlanKnobs& k);
double NvmeWriteBwPerRank(const HwProfile& hw, const PlanKnobs& k);
std::vector<Op> BuildForwardOps(const ModelSpec& m, const HwProfile& hw, const PlanKnobs& k, bool with_names = true);

// The executor's parameter groups among `ops` (one per op with parameters; each is one NVMe
// request per array it moves).
int64_t ParamGroups(const std::vector<Op>& ops);

}  // namespace zinf
