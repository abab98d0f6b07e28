// Discrete-event simulation of one training step of one representative rank. Each resource
// is a stream: its tasks run one at a time in issue order, each starting when its
// dependencies allow (dependencies on another task's end, or on its start for prefetch
// triggers). Prefetch depths bound how far ahead fetches are issued, which bounds the
// buffers they hold. One rank stands for all: 1000s of GPUs cost the same as one.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "core/hw_profile.h"
#include "core/model_spec.h"
#include "core/plan.h"

namespace zinf {

enum class Res { kCompute, kH2D, kD2H, kNvmeRead, kNvmeWrite, kNetwork, kCpuOpt, kCount };
constexpr int kNumRes = static_cast<int>(Res::kCount);
const char* ResName(Res r);  // "compute", "h2d", ... (the names Prediction::busy_s uses)

struct SimTask {
  std::string name;       // empty unless SimOptions::keep_tasks
  std::string phase;      // forward | recompute | backward | optimizer
  Res res = Res::kCompute;
  double dur_s = 0;
  double start_s = 0;
  double end_s = 0;
  int critical_pred = -1;  // the task whose end (or start) fixed this task's start
  // CPU seconds at one core's speed the model gives the task where that is not its time on
  // its queue: a collective's network-lane CPU on a CPU node with more ranks than cores
  // (CollectiveCpuTime); 0: not given. Reported, not scheduled.
  double cpu_s = 0;
};

struct SimOptions {
  bool keep_tasks = false;  // keep every task with its name (for traces and reports)
};

struct SimResult {
  double step_s = 0;
  std::array<double, kNumRes> busy_s{};
  std::array<double, kNumRes> utilisation{};  // busy / step
  double forward_s = 0, backward_s = 0, optimizer_s = 0;  // phase end times minus start
  std::vector<SimTask> tasks;                 // when keep_tasks
  std::vector<int> critical_path;             // task indices, first to last (when keep_tasks)
  size_t num_tasks = 0;
};

SimResult SimulateStep(const ModelSpec& m, const HwProfile& hw, const PlanKnobs& k, const SimOptions& o = {});

}  // namespace zinf
