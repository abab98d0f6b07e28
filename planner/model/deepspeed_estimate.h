// DeepSpeed's estimate_zero3_model_states_mem_needs closed forms (reference notes, section 6.1),
// so `zplan estimate` can show where zinf's accounting agrees with it and where it goes beyond
// (activations, buffers, NVMe, dtype).
#pragma once

#include <string>
#include <vector>

namespace zinf {

struct DeepSpeedEstimateRow {
  std::string offload_optimizer;  // "cpu" | "none"
  std::string offload_param;      // "cpu" | "none"
  bool zero_init = true;
  double gpu_bytes = 0;  // per GPU
  double cpu_bytes = 0;  // per node
};

// total_params P, largest_layer_params L, GPUs per node g, nodes n, buffer factor f (1.5).
std::vector<DeepSpeedEstimateRow> DeepSpeedZero3Estimate(double total_params, double largest_layer_params,
                                                         int64_t gpus_per_node, int64_t nodes,
                                                         double buffer_factor = 1.5);

}  // namespace zinf
