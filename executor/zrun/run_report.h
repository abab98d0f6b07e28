// What a zrun run measured, beside what the plan predicted: summary.yaml, metrics.csv and
// report.html (measured vs predicted step time and phases, memory per tier against the plan).
#pragma once

#include <string>
#include <vector>

#include "core/cpu_clock.h"
#include "core/plan.h"
#include "core/speed_totals.h"
#include "executor/backend/speed_check.h"
#include "executor/train/trainer.h"

namespace zinf {

// CPU time per step of a rank's threads (after the first step, like measured_step_s): its
// compute thread (the kernels; with a thread team, the team's other threads are in `other`),
// each lane, the rest of the process; and how busy the node's cores were meanwhile.
struct CpuSnapshot {
  double process = 0, compute = 0, nvme_read = 0, h2d = 0, network = 0;
  NodeCpuTimes node;
};
struct CpuPerStep {
  bool measured = false;
  double compute = 0, nvme_read = 0, h2d = 0, network = 0, other = 0;  // seconds a step
  double node_busy_fraction = 0;                                        // 0 where unknown
};
// Per step between snapshots a and b, less `excluded` (the CPU and wall time of work between
// them that is not the steps': the speed checks).
CpuPerStep CpuBetween(const CpuSnapshot& a, const CpuSnapshot& b, double steps, const CpuSnapshot& excluded = {});
// Adds to `acc` what was spent between `from` and `to`.
void AddCpuBetween(CpuSnapshot* acc, const CpuSnapshot& from, const CpuSnapshot& to);

struct RunSummary {
  std::string plan_path;
  std::string data_path;
  int ranks = 1;
  std::vector<StepResult> steps;
  double measured_step_s = 0;  // mean over steps after the first (warm-up), or the one step
  double measured_fwd_bwd_s = 0, measured_drain_s = 0, measured_optimizer_s = 0;
  double device_peak_bytes = 0;  // per rank (arena peak)
  double host_bytes = 0;         // per rank: host tiers + pinned staging + host checkpoints
  double nvme_bytes = 0;         // per rank
  Zero3Stats io;
  double nvme_read_bw = 0, nvme_write_bw = 0;  // the profile's (bytes/s; 0: unknown)
  CpuPerStep cpu;
  SpeedTotals speed;  // compute-speed checks (none: checks == 0)
  SpeedTotals memory_speed;  // memory checks beside them (none: checks == 0)
  SpeedTotals drive_read, drive_write;  // drive-speed checks (none: checks == 0)
};

// The NVMe bound of one step: its bytes read and written (mean over the steps after the first,
// like measured_step_s) at the
// profile's measured bandwidths, added (one drive serves both directions). 0 when unknown.
struct NvmeBound {
  double read_bytes = 0, write_bytes = 0, bound_s = 0;
};
NvmeBound NvmeBoundPerStep(const RunSummary& s);

void Summarise(RunSummary& s);  // fills the measured means from steps
std::string MetricsCsv(const RunSummary& s);
std::string SummaryYaml(const RunSummary& s, const Plan& plan);
Status WriteRunReport(const RunSummary& s, const Plan& plan, const std::string& path);

}  // namespace zinf
