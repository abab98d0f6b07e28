#include "planner/profile/calibrate.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "executor/backend/cpu/cpu_backend.h"

namespace zinf {

Result<Calibration> CalibrateComputeSpeed(const Plan& plan, const HwProfile& hw, double seconds) {
  if (hw.backend != "cpu") {
    return InvalidArgument(fmt::format("--calibrate: profile '{}' is a {} backend's; calibration times the CPU backend's GEMMs",
                                       hw.name, hw.backend));
  }
  Calibration c;
  // The profile's compute probes ran cores / devices threads (a --threads profile: fewer).
  c.threads = static_cast<int>(std::max<int64_t>(1, hw.cpu_cores / std::max<int64_t>(1, hw.gpus_per_node)));
  ZINF_ASSIGN_OR_RETURN(auto be, MakeCpuBackend(size_t{1} << 20, c.threads));
  ZINF_ASSIGN_OR_RETURN(auto check, SpeedCheck::Create(be.get(), plan, hw));
  if (!check) {
    return InvalidArgument(fmt::format("--calibrate: profile '{}' has no GEMM rates to check the plan's linears against", hw.name));
  }
  // Checks of zrun's length (20 ms), back to back, until `seconds` have passed.
  const auto t0 = std::chrono::steady_clock::now();
  do check->Run(0.02);
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < seconds);
  c.totals = check->totals();
  c.memory = check->memory_totals();
  if (c.totals.checks == 0 || c.speed() <= 0) return Internal("--calibrate: no check completed");
  return c;
}

}  // namespace zinf
