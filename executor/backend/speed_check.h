// SpeedCheck: how fast this machine's compute runs now, against the profile the plan was made
// from. Between steps, zrun times the plan's linear GEMMs (forward Y = X W^T, backward dW and
// dX: the executor's layouts, kernel and threads) and costs the same GEMMs at the profile's
// rates; expected time / measured time is the compute speed relative to the profile (1: as
// profiled; 0.9: ten percent slower). A virtual machine whose host is shared drifts by tens of
// percent within minutes; the check separates that drift from the model's own error
// (docs/performance-model.md). CPU backend only: the profile's CPU rates are what it checks.
#pragma once

#include <memory>
#include <vector>

#include "core/hw_profile.h"
#include "core/plan.h"
#include "core/speed_totals.h"
#include "core/status.h"
#include "executor/backend/backend.h"

namespace zinf {

class SpeedCheck {
 public:
  // Null (and no error) where there is nothing to check: another backend than the CPU's, or
  // a profile without GEMM rates.
  static Result<std::unique_ptr<SpeedCheck>> Create(Backend* be, const Plan& plan, const HwProfile& hw);
  // One check: rounds of the plan's linears (each forward and backward, in turn). The first
  // check runs rounds until `min_s` has passed (at least one); every later check runs that
  // many rounds, whatever its min_s, so that every check is the same work. The totals' ratio
  // (expected / measured seconds summed) is then the harmonic mean of the checks' speeds:
  // the mean of 1 / speed, as the mean step time weighs a machine whose speed moves between
  // checks spaced evenly in steps. (Checks of equal time instead would give the arithmetic
  // mean, which overstates the speed: a run half its steps at 1x and half at 0.75x takes
  // 1.17x its fast time, not 1 / 0.875 = 1.14x.) Adds it to totals(). Then, where the profile
  // has a host memory bandwidth, one memory check (MemoryCopyPass) added to memory_totals().
  void Run(double min_s = 0.02);
  const SpeedTotals& totals() const { return totals_; }
  // Memory checks: copies across buffers larger than the caches against the profile's
  // bandwidth.host_memory. The GEMMs and the memory do not move together on a shared VM (a
  // 90 s trace on the 2-core VM: GEMM 145 or 171 GFLOP/s, switching every 5-20 s; memcpy
  // 23-28 GB/s; correlation 0.01), so the work bound by memory is checked apart.
  const SpeedTotals& memory_totals() const { return memory_totals_; }

  // The memory check's copy, shared with the profile's memory probe so that the check and
  // the rate it is held against are the same operation: `bytes` from src to dst, split over
  // `threads` threads (memcpy each). Returns its seconds.
  static double MemoryCopyPass(void* dst, const void* src, size_t bytes, int threads);
  // Each of the memory check's two buffers (64 MiB: twice this VM's 32 MiB L3).
  static constexpr size_t kMemoryCheckBytes = size_t{64} << 20;

  // The largest matrix a check uses, in floats (16 MiB).
  static constexpr int64_t kMaxCheckElems = int64_t{1} << 22;
  // Rounds of the plan's linears each check runs (0 before the first check).
  int rounds() const { return rounds_; }
  struct Linear {
    int m = 0, k = 0, n = 0;  // tokens x in -> out
    double expected_s = 0;    // forward + backward at the profile's rates
  };
  // The plan's linear layers as the time model costs them (tiled along their outputs; cut to
  // kMaxCheckElems a matrix).
  static std::vector<Linear> PlanLinears(const Plan& plan, const HwProfile& hw);

 private:
  SpeedCheck() = default;
  double Pass(size_t i);  // linear i, forward and backward; returns its expected seconds
  Backend* be_ = nullptr;
  std::vector<Linear> linears_;
  int rounds_ = 0;  // rounds of linears_ a check runs (0: the first check sets it)
  std::vector<float> x_, w_, y_, dy_, gw_, gx_;
  std::vector<char> mem_src_, mem_dst_;  // the memory check's buffers (empty: no check)
  double mem_bw_ = 0;                    // the profile's bandwidth.host_memory (read + write bytes / s)
  SpeedTotals totals_, memory_totals_;
};

}  // namespace zinf
