#include "planner/model/compute_speed.h"

#include <fmt/format.h>

namespace zinf {
namespace {

void Scale(std::vector<CurvePoint>& curve, double f) {
  for (CurvePoint& p : curve) p.y *= f;
}

}  // namespace

HwProfile AtComputeSpeed(HwProfile hw, double speed) {
  if (speed <= 0 || speed == 1.0) return hw;
  hw.peak_flops *= speed;
  hw.achievable_flops *= speed;
  Scale(hw.gemm_curve, speed);
  Scale(hw.gemm_bwd_curve, speed);
  Scale(hw.gemm_curve_bf16, speed);
  for (GemmTokenCurve& t : hw.gemm_token_curves) {
    Scale(t.fwd, speed);
    Scale(t.bwd, speed);
  }
  Scale(hw.attention_curve, speed);
  Scale(hw.attention_fwd_curve, speed);
  hw.gelu_elems_per_s *= speed;
  hw.gelu_bwd_elems_per_s *= speed;
  hw.cross_entropy_elems_per_s *= speed;
  hw.cross_entropy_bwd_elems_per_s *= speed;
  hw.op_overhead_s /= speed;
  hw.kernel_launch_s /= speed;
  hw.memory_bw *= speed;
  if (hw.backend == "cpu") {
    hw.host_mem_bw *= speed;
    hw.h2d_bw *= speed;
    hw.d2h_bw *= speed;
    hw.h2d_bw_alone *= speed;
    hw.d2h_bw_alone *= speed;
    hw.cpu_adam_params_per_s *= speed;
    hw.nvme_cpu_per_request_s /= speed;
    hw.nvme_cpu_per_byte_s /= speed;
  }
  hw.description += fmt::format(" (compute at {:.3f}x its measured speed)", speed);
  return hw;
}

}  // namespace zinf
