// Plan: the schedule zplan chooses and zrun executes (format zinf.plan/v1), with the
// planner's prediction so a run can be compared against it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/model_spec.h"
#include "core/status.h"

namespace zinf {

enum class Tier { kDevice, kHost, kNvme };
const char* TierName(Tier t);  // "device" | "host" | "nvme"
Result<Tier> ParseTier(const std::string& s);

struct Placement {
  Tier params = Tier::kDevice;     // working-precision parameter shards
  Tier grads = Tier::kDevice;      // gradient shards
  Tier optimizer = Tier::kDevice;  // fp32 master, m, v (the optimizer runs where they live: device or CPU)
};

struct PlanKnobs {
  int64_t nodes = 1;
  int64_t gpus_per_node = 1;
  int64_t micro_batch = 1;          // sequences per GPU per micro-step
  int64_t grad_accum = 1;
  int64_t seq_len = 0;
  std::string dtype = "fp16";       // fp16 | bf16 | fp32 (working precision)
  std::string accounting = "zero";  // zero: 16 B/param; paper: 20 B/param (adds fp32 grads)
  Placement placement;
  int64_t ckpt_interval = 1;        // layers per activation checkpoint; 0 = no checkpointing
  Tier ckpt_tier = Tier::kDevice;   // device | host
  int64_t tile_factor = 1;          // memory-centric tiling of the big linears
  int64_t prefetch_nvme = 3;        // NVMe->host reads issued this many ops ahead
  int64_t prefetch_h2d = 2;         // host->device copies this many ops ahead
  int64_t prefetch_allgather = 1;   // allgathers this many ops ahead
  double prefetch_buffer_bytes = 0;  // device: gathered params in flight
  double staging_bytes = 0;          // host pinned staging for H2D/D2H
  double nvme_swap_buffer_bytes = 0; // one NVMe swap buffer (host, pinned)
  int64_t nvme_swap_buffers = 0;
  double reduce_bucket_bytes = 0;    // device: gradient reduce-scatter bucket
  int64_t optimizer_chunk_params = 0;  // CPU Adam sub-group size (elements)
  std::string nvme_dir = "/tmp/zinf-nvme";
  int64_t nvme_block_size = 1 << 20;
  int64_t nvme_queue_depth = 8;
  double device_budget_bytes = 0;    // per GPU: the plan must fit in it (zrun's arena size)
  double host_budget_bytes = 0;      // per node
  double nvme_budget_bytes = 0;      // per node

  int64_t dp() const { return nodes * gpus_per_node; }
};

// One line of the memory accounting: what, which tier, bytes per GPU (device) or per node.
struct MemoryItem {
  std::string tier;
  std::string name;
  double bytes = 0;
  std::string formula;
};

// The range of a speed against the profile (prediction.compute_speed, zplan simulate's
// --compute-speed and friends) that a plan accepts and zplan writes.
inline constexpr double kMinSpeed = 1e-6;
inline constexpr double kMaxSpeed = 1e6;

struct Prediction {
  double step_time_s = 0;
  double tokens_per_s = 0;          // whole job
  double tflops_per_gpu = 0;        // model FLOPs (fwd+bwd, no recompute) / step / GPU
  double efficiency = 0;            // no-overlap bound (DESIGN: ait*bw/(ait*bw+peak))
  std::string bottleneck;           // resource with the largest busy time
  std::string model;                // "analytic" or "simulated"
  // The cores' speed against the profile that the prediction assumed: 1 as profiled; below 1
  // slower. `zplan plan --calibrate` measures it (the plan's own GEMMs, timed at plan time) on
  // a CPU-backend profile; `zplan simulate` uses it unless told another.
  // Within kMinSpeed..kMaxSpeed: a sanitizer or debug build runs its GEMMs ~100x slower than the
  // release build that took the profile, and the plan it writes must read back.
  double compute_speed = 1.0;
  std::map<std::string, double> busy_s;   // per resource busy time within a step
  std::map<std::string, double> phase_s;  // forward, backward, optimizer
  double device_bytes = 0;          // peak per GPU
  double host_bytes = 0;            // peak per node
  double nvme_bytes = 0;            // per node
  std::vector<MemoryItem> memory;
};

struct Plan {
  ModelSpec model;
  std::string hw_name;
  std::string hw_path;
  std::string backend = "cuda";     // from the profile: cuda | cpu
  PlanKnobs knobs;
  Prediction prediction;
};

Result<Plan> LoadPlan(const std::string& path);
std::string PlanToYaml(const Plan& p);
Status SavePlan(const Plan& p, const std::string& path);

}  // namespace zinf
