#include "planner/model/deepspeed_estimate.h"

#include <algorithm>

namespace zinf {

std::vector<DeepSpeedEstimateRow> DeepSpeedZero3Estimate(double P, double L, int64_t g_i, int64_t n_i, double f) {
  const double g = static_cast<double>(g_i), n = static_cast<double>(n_i), G = g * n;
  std::vector<DeepSpeedEstimateRow> rows;
  for (bool zi : {true, false}) {
    // offload_optimizer=cpu, offload_param=cpu: GPU holds only the largest layer (fp16 p+g).
    rows.push_back({"cpu", "cpu", zi, 4 * L, zi ? 18 * P / n * f : P * std::max(4 * g, 18 / n) * f});
    // offload_optimizer=cpu only: fp16 param shards stay on the GPU.
    rows.push_back({"cpu", "none", zi, 4 * L + 2 * P / G, zi ? 16 * P / n * f : P * std::max(4 * g, 16 / n) * f});
    // Nothing offloaded: 18 B/param sharded over all GPUs.
    rows.push_back({"none", "none", zi, 4 * L + 18 * P / G, zi ? 4 * L * g * f : 4 * P * g * f});
  }
  return rows;
}

}  // namespace zinf
