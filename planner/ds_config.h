// DeepSpeed ds_config.json equivalent of a plan: ZeRO stage 3 with offload_param,
// offload_optimizer, aio, activation_checkpointing and the stage3_* knobs, sized so that
// DeepSpeed's own consistency rules hold (buffer_size >= largest NVMe shard, enough buffers).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/plan.h"

namespace zinf {

nlohmann::json DeepSpeedConfig(const Plan& p);

}  // namespace zinf
