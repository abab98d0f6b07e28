#include "planner/search/evaluate.h"

#include <algorithm>
#include <cmath>

#include "planner/model/time_model.h"

namespace zinf {

Capacity CapacityFor(const HwProfile& hw, const PlanKnobs& k, double device_reserve) {
  Capacity c;
  c.device = k.device_budget_bytes > 0 ? k.device_budget_bytes : hw.device_memory_bytes * (1.0 - device_reserve);
  c.host = k.host_budget_bytes > 0 ? k.host_budget_bytes : hw.host_memory_bytes * 0.9;
  c.nvme = k.nvme_budget_bytes > 0 ? k.nvme_budget_bytes : hw.nvme_capacity_bytes;
  return c;
}

std::string OverflowTier(const MemoryEstimate& mem, const Capacity& cap) {
  if (mem.device_bytes > cap.device) return "device";
  if (mem.host_bytes > cap.host) return "host";
  if (mem.nvme_bytes > cap.nvme) return "nvme";
  return "";
}

void DeriveBuffers(const ModelSpec& m, PlanKnobs& k) {
  const OpSizes ops = ComputeOpSizes(m);
  const double w = DtypeBytes(k.dtype);
  const double dp = static_cast<double>(k.dp());
  const double op_bytes = w * std::max(ops.largest_linear / static_cast<double>(k.tile_factor), ops.layer / 6.0);
  const double block = static_cast<double>(k.nvme_block_size);
  auto align = [&](double b) { return std::max(block, std::ceil(b / block) * block); };
  const double P = CountParams(m).total;
  k.prefetch_buffer_bytes = static_cast<double>(k.prefetch_allgather) * op_bytes;
  k.reduce_bucket_bytes = op_bytes;
  // Staging: one op shard in each direction per H2D prefetch slot.
  const double shard = std::max(op_bytes, w * ops.embedding) / dp;
  k.staging_bytes = align(2.0 * static_cast<double>(std::max<int64_t>(k.prefetch_h2d, 1)) * shard);
  // Optimizer sub-groups: at most 1/8 of the shard and <= 64M params, so pinned buffers stay small.
  const double shard_params = P / dp;
  k.optimizer_chunk_params = static_cast<int64_t>(std::max(1.0, std::min(shard_params / 8.0, 64.0 * 1024 * 1024)));
  const bool nvme = k.placement.params == Tier::kNvme || k.placement.grads == Tier::kNvme ||
                    k.placement.optimizer == Tier::kNvme;
  if (nvme) {
    const double opt_chunk_bytes = 4.0 * static_cast<double>(k.optimizer_chunk_params);  // one fp32 state
    k.nvme_swap_buffer_bytes = align(std::max(shard, opt_chunk_bytes));
    // Params: nvme_depth reads in flight + the op in use; optimizer: 4 states read ahead + 4 written behind.
    int64_t count = 0;
    if (k.placement.params == Tier::kNvme) count += k.prefetch_nvme + 1;
    if (k.placement.optimizer == Tier::kNvme) count += 8;
    if (k.placement.grads == Tier::kNvme) count += 2;
    k.nvme_swap_buffers = count;
  } else {
    k.nvme_swap_buffer_bytes = 0;
    k.nvme_swap_buffers = 0;
  }
}

Prediction Evaluate(const ModelSpec& m, const HwProfile& hw, const PlanKnobs& k) {
  Prediction p;
  MemoryEstimate mem = EstimateMemory(m, hw, k);
  TimeEstimate te = EstimateTime(m, hw, k);
  StepFlops fl = ComputeStepFlops(m, k);
  p.model = "analytic";
  p.step_time_s = te.step_s;
  const double tokens = static_cast<double>(k.micro_batch * k.seq_len * k.grad_accum * k.dp());
  p.tokens_per_s = te.step_s > 0 ? tokens / te.step_s : 0;
  p.tflops_per_gpu = te.step_s > 0 ? fl.model / te.step_s / 1e12 : 0;
  p.efficiency = te.efficiency;
  p.bottleneck = te.bottleneck;
  p.busy_s = te.busy_s;
  p.phase_s["forward_backward"] = te.fwd_bwd_s;
  p.phase_s["optimizer"] = te.optimizer_s;
  p.device_bytes = mem.device_bytes;
  p.host_bytes = mem.host_bytes;
  p.nvme_bytes = mem.nvme_bytes;
  p.memory = mem.items;
  return p;
}

}  // namespace zinf
