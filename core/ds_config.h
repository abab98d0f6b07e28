// DsConfig: a strict reader of DeepSpeed ds_config.json files, for the keys zinf writes
// (planner/ds_config.cc) and the common ones users have. Types are checked; "auto" is accepted
// where DeepSpeed's Hugging Face integration fills it in; unknown top-level keys are allowed
// (DeepSpeed has hundreds), unknown keys inside the sections read here are warnings; errors
// name the file and the key path and say what is allowed. DsPlacementFor maps a config to
// zinf's Placement (ZeRO stage 3 only).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/plan.h"
#include "core/status.h"

namespace zinf {

// An integer knob: absent, "auto", or a value.
struct DsInt {
  bool present = false;
  bool is_auto = false;
  int64_t value = 0;
  bool known() const { return present && !is_auto; }
};

struct DsOffload {
  std::string device = "none";  // none | cpu | nvme
  std::string nvme_path;
  bool pin_memory = false;
  DsInt buffer_count;
  DsInt buffer_size;
  DsInt max_in_cpu;
};

struct DsConfig {
  DsInt train_batch_size;
  DsInt micro_batch;  // train_micro_batch_size_per_gpu
  DsInt grad_accum;   // gradient_accumulation_steps
  bool has_zero = false;
  int64_t zero_stage = 0;
  DsOffload offload_param;
  DsOffload offload_optimizer;
  std::map<std::string, DsInt> stage3;  // stage3_* knobs, reduce_bucket_size, sub_group_size
  int64_t aio_block_size = 1 << 20;
  int64_t aio_queue_depth = 8;
  bool has_aio = false;
  bool has_activation_checkpointing = false;
  bool partition_activations = false;
  bool cpu_checkpointing = false;
  DsInt number_checkpoints;
  // true / false / "auto" (-1).
  int fp16_enabled = 0;
  int bf16_enabled = 0;
  std::vector<std::string> warnings;  // unknown keys inside the sections read here
};

Result<DsConfig> LoadDsConfig(const std::string& path);
// The same for text in memory; `path` names it in messages.
Result<DsConfig> ParseDsConfig(const std::string& text, const std::string& path);

// What the config asks of zinf: placement of params, grads and optimizer states. DeepSpeed
// keeps the fp32 gradient partitions with an offloaded optimizer (host), else on the device;
// it has no NVMe gradient offload. Requires zero_optimization.stage 3.
Result<Placement> DsPlacementFor(const DsConfig& c, const std::string& path);
// "none", "opt:host", ... (planner/search Strategies names) or "custom".
std::string DsStrategyName(const Placement& p);

}  // namespace zinf
