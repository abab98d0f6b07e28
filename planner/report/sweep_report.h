// Sweep results: CSV and an HTML report (max model size per strategy, TFLOP/s per GPU vs
// size, scaling with nodes).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace zinf {

struct SweepPoint {
  std::string model;
  double params = 0;
  int64_t nodes = 1;
  int64_t gpus = 1;
  std::string strategy;
  bool fits = false;
  double step_time_s = 0;
  double tokens_per_s = 0;
  double tflops_per_gpu = 0;
  double device_bytes = 0;
  int64_t micro_batch = 0;
  std::string bottleneck;
};

std::string SweepCsv(const std::vector<SweepPoint>& points);
Status WriteSweepReport(const std::vector<SweepPoint>& points, const std::string& axis, const std::string& hw_name,
                        const std::string& path);

}  // namespace zinf
