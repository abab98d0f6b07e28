#include "planner/ds_config.h"

#include <algorithm>
#include <cmath>

#include "planner/model/memory_model.h"

namespace zinf {

nlohmann::json DeepSpeedConfig(const Plan& p) {
  using nlohmann::json;
  const PlanKnobs& k = p.knobs;
  const ModelSpec& m = p.model;
  const double w = DtypeBytes(k.dtype);
  const OpSizes ops = ComputeOpSizes(m);
  const double dp = static_cast<double>(k.dp());
  const double h = static_cast<double>(m.hidden);
  auto elems = [&](double bytes) { return static_cast<int64_t>(std::max(1.0, std::floor(bytes / w))); };

  json ds;
  ds["train_micro_batch_size_per_gpu"] = k.micro_batch;
  ds["gradient_accumulation_steps"] = k.grad_accum;
  ds["train_batch_size"] = k.micro_batch * k.grad_accum * k.dp();
  ds["gradient_clipping"] = 1.0;
  ds["fp16"] = {{"enabled", k.dtype == "fp16"}};
  if (k.dtype == "fp16") ds["fp16"]["loss_scale"] = 0;  // dynamic
  ds["bf16"] = {{"enabled", k.dtype == "bf16"}};
  ds["wall_clock_breakdown"] = false;

  json z;
  z["stage"] = 3;
  z["overlap_comm"] = true;
  z["contiguous_gradients"] = true;
  z["reduce_scatter"] = true;
  z["reduce_bucket_size"] = elems(k.reduce_bucket_bytes);
  z["stage3_prefetch_bucket_size"] = elems(k.prefetch_buffer_bytes);
  // Gathered params alive at once: the op in use plus the prefetch window (elements).
  z["stage3_max_live_parameters"] = elems(k.prefetch_buffer_bytes) + static_cast<int64_t>(ops.largest_linear / static_cast<double>(k.tile_factor));
  z["stage3_max_reuse_distance"] = z["stage3_max_live_parameters"];
  z["stage3_param_persistence_threshold"] = static_cast<int64_t>(10 * h);  // norms and biases stay resident
  z["stage3_gather_16bit_weights_on_model_save"] = true;
  z["sub_group_size"] = k.optimizer_chunk_params;
  // Largest NVMe-resident shard (elements): DeepSpeed's buffer_size must cover it.
  const int64_t largest_shard = static_cast<int64_t>(std::ceil(std::max(ops.embedding, ops.largest_linear) / dp));
  if (k.placement.params != Tier::kDevice) {
    json op;
    op["device"] = k.placement.params == Tier::kNvme ? "nvme" : "cpu";
    op["pin_memory"] = true;
    if (k.placement.params == Tier::kNvme) {
      op["nvme_path"] = k.nvme_dir;
      // Two tensors (weight, bias) per linear: the one in use and nvme_depth ahead, + slack.
      op["buffer_count"] = std::max<int64_t>(5, 2 * (k.prefetch_nvme + 1) + 2);
      op["buffer_size"] = largest_shard;
      op["max_in_cpu"] = 1000000000;
    }
    z["offload_param"] = op;
  }
  if (k.placement.optimizer != Tier::kDevice) {
    json oo;
    oo["device"] = k.placement.optimizer == Tier::kNvme ? "nvme" : "cpu";
    oo["pin_memory"] = true;
    if (k.placement.optimizer == Tier::kNvme) {
      oo["nvme_path"] = k.nvme_dir;
      oo["buffer_count"] = 8;  // >= 4 Adam states, doubled for pipelined read and write
      oo["pipeline_read"] = true;
      oo["pipeline_write"] = true;
    }
    z["offload_optimizer"] = oo;
  }
  ds["zero_optimization"] = z;
  ds["aio"] = {{"block_size", k.nvme_block_size}, {"queue_depth", k.nvme_queue_depth},
               {"intra_op_parallelism", 1}, {"single_submit", false}, {"overlap_events", true}};
  if (k.ckpt_interval > 0) {
    ds["activation_checkpointing"] = {
        {"partition_activations", false},
        {"cpu_checkpointing", k.ckpt_tier == Tier::kHost},
        {"contiguous_memory_optimization", false},
        {"number_checkpoints", static_cast<int64_t>(std::ceil(static_cast<double>(m.n_layer) / static_cast<double>(k.ckpt_interval)))},
        {"synchronize_checkpoint_boundary", false},
        {"profile", false}};
  }
  return ds;
}

}  // namespace zinf
