// zplan simulate: the discrete-event simulation of one step of a plan: step time,
// per-resource utilisation, the critical path, and a Chrome trace.
#include <fmt/format.h>

#include <cstdio>
#include <map>

#include "core/plan.h"
#include "core/units.h"
#include "planner/catalog.h"
#include "planner/model/compute_speed.h"
#include "planner/cli/commands.h"
#include "planner/report/sim_trace.h"
#include "planner/search/refine.h"

namespace zinf {
namespace {

struct SimulateArgs {
  std::string plan;
  std::string hw;
  // Not trace.json: that is the name zrun gives its measured trace, which a simulation run
  // in a zrun output directory would otherwise overwrite.
  std::string trace = "sim-trace.json";
  double compute_speed = 0;  // 0: the plan's (prediction.compute_speed; 1 unless planned with --calibrate)
  double memory_speed = 0;   // 0: the compute speed's
  double nvme_read_speed = 1, nvme_write_speed = 1;
};

int RunSimulate(const SimulateArgs& a) {
  Result<Plan> plan = LoadPlan(a.plan);
  if (!plan.ok()) return Fail(plan.status());
  std::string hw_arg = !a.hw.empty() ? a.hw : (!plan->hw_path.empty() ? plan->hw_path : plan->hw_name);
  Result<std::string> hw_path = ResolveHwPath(hw_arg);
  if (!hw_path.ok()) return Fail(hw_path.status().WithContext(a.plan + ": hardware (use --hw)"));
  Result<HwProfile> hw = LoadHwProfile(*hw_path);
  if (!hw.ok()) return Fail(hw.status());
  const double speed = a.compute_speed > 0 ? a.compute_speed : plan->prediction.compute_speed;
  if (speed != 1.0 || (a.memory_speed > 0 && a.memory_speed != speed)) {
    *hw = AtComputeSpeed(*hw, speed, a.memory_speed);
    std::printf("zplan simulate: compute at %.3fx the profile's speed%s", speed,
                a.compute_speed > 0 ? "" : " (the plan's calibration)");
    if (a.memory_speed > 0) std::printf(", memory at %.3fx", a.memory_speed);
    std::printf("\n");
  }
  if (a.nvme_read_speed != 1.0 || a.nvme_write_speed != 1.0) {
    *hw = AtDriveSpeed(*hw, a.nvme_read_speed, a.nvme_write_speed);
    std::printf("zplan simulate: the drive reading at %.3fx and writing at %.3fx the profile's speed\n", a.nvme_read_speed,
                a.nvme_write_speed);
  }
  SimOptions o;
  o.keep_tasks = true;
  SimResult r = SimulateStep(plan->model, *hw, plan->knobs, o);
  std::printf("zplan simulate: %s on %s: %zu tasks\n", plan->model.name.c_str(), hw->name.c_str(), r.num_tasks);
  std::printf("step %s (planned %s %s): forward %s, backward %s, optimizer %s\n", FormatSeconds(r.step_s).c_str(),
              plan->prediction.model.c_str(), FormatSeconds(plan->prediction.step_time_s).c_str(),
              FormatSeconds(r.forward_s).c_str(), FormatSeconds(r.backward_s).c_str(), FormatSeconds(r.optimizer_s).c_str());
  std::printf("%-14s %12s %8s\n", "resource", "busy", "util");
  for (int i = 0; i < kNumRes; ++i) {
    std::printf("%-14s %12s %7.1f%%\n", ResName(static_cast<Res>(i)), FormatSeconds(r.busy_s[static_cast<size_t>(i)]).c_str(),
                100.0 * r.utilisation[static_cast<size_t>(i)]);
  }
  // The critical path, summarised by resource and phase.
  std::map<std::string, double> on_path;
  for (int t : r.critical_path) {
    const SimTask& task = r.tasks[static_cast<size_t>(t)];
    on_path[fmt::format("{} / {}", task.phase, ResName(task.res))] += task.dur_s;
  }
  std::printf("critical path (%zu tasks), time by phase / resource:\n", r.critical_path.size());
  for (const auto& [k, v] : on_path) std::printf("  %-28s %12s %6.1f%%\n", k.c_str(), FormatSeconds(v).c_str(), 100.0 * v / r.step_s);
  Status s = WriteSimTrace(r, a.trace);
  if (!s.ok()) return Fail(s);
  std::printf("wrote %s (open in Perfetto or chrome://tracing)\n", a.trace.c_str());
  return 0;
}

}  // namespace

void RegisterSimulate(CLI::App& app, std::function<void(int)> set_rc) {
  auto args = std::make_shared<SimulateArgs>();
  CLI::App* cmd = app.add_subcommand("simulate", "simulate one step of a plan: utilisation, critical path, Chrome trace");
  cmd->add_option("plan", args->plan, "plan.yaml written by zplan plan")->required();
  cmd->add_option("--hw", args->hw, "hardware profile (default: the one the plan names)");
  cmd->add_option("--trace", args->trace, "Chrome trace output")->capture_default_str();
  cmd->add_option("--compute-speed", args->compute_speed,
                  "simulate with the compute this many times as fast as profiled (zrun's summary.yaml compute_speed."
                  "vs_profile: the speed its checks measured during the run); scales the cores' work (on the CPU backend "
                  "also its copies and the collectives between its ranks), not the drive's or a GPU node's links' "
                  "figures (default: the plan's prediction.compute_speed, 1 unless planned with --calibrate)")
      ->check(CLI::Range(kMinSpeed, kMaxSpeed));
  cmd->add_option("--memory-speed", args->memory_speed,
                  "simulate what streams through memory (the memory passes and, on the CPU backend, the copies, Adam and "
                  "the collectives between its ranks) at this many times the profiled speed instead of the compute's "
                  "(zrun's summary.yaml memory_speed.vs_profile: its memory checks between steps)")
      ->check(CLI::Range(kMinSpeed, kMaxSpeed));
  cmd->add_option("--nvme-read-speed", args->nvme_read_speed,
                  "simulate with the drive reading this many times as fast as profiled (zrun's summary.yaml drive_speed."
                  "read: its checks between steps); scales the NVMe read bandwidths, not the latency")
      ->check(CLI::Range(kMinSpeed, kMaxSpeed))->capture_default_str();
  cmd->add_option("--nvme-write-speed", args->nvme_write_speed,
                  "as --nvme-read-speed, for writes (summary.yaml drive_speed.write)")
      ->check(CLI::Range(kMinSpeed, kMaxSpeed))->capture_default_str();
  cmd->callback([args, set_rc] { set_rc(RunSimulate(*args)); });
}

}  // namespace zinf
