#include "planner/model/compute_speed.h"

#include <fmt/format.h>

namespace zinf {
namespace {

void Scale(std::vector<CurvePoint>& curve, double f) {
  for (CurvePoint& p : curve) p.y *= f;
}

}  // namespace

HwProfile AtComputeSpeed(HwProfile hw, double speed, double memory_speed) {
  if (speed <= 0) speed = 1.0;
  if (memory_speed <= 0) memory_speed = speed;
  if (speed == 1.0 && memory_speed == 1.0) return hw;
  // Rates (per second) scale with the speed, fixed costs (seconds) against it; on the CPU
  // backend the cores also copy (host<->device and between ranks), run Adam and serve the
  // NVMe requests. What streams through memory follows the memory speed: device.memory_bw
  // (the memory passes' kernels), and on the CPU backend the copies, Adam, the collectives'
  // memcpy between a node's ranks and the NVMe requests' per-byte CPU.
  using Field = double HwProfile::*;
  const bool cpu = hw.backend == "cpu";
  for (Field f : {&HwProfile::peak_flops, &HwProfile::achievable_flops, &HwProfile::gelu_elems_per_s,
                  &HwProfile::gelu_bwd_elems_per_s, &HwProfile::cross_entropy_elems_per_s,
                  &HwProfile::cross_entropy_bwd_elems_per_s})
    hw.*f *= speed;
  hw.memory_bw *= memory_speed;
  Scale(hw.hot_pass_curve, memory_speed);
  for (Field f : {&HwProfile::op_overhead_s, &HwProfile::kernel_launch_s}) hw.*f /= speed;
  if (cpu) {
    // The collectives between a node's ranks (intra_node_bw, collective_latency_s and the
    // curves below) are memcpy and a reduce-scatter's sums by the ranks' own threads: they slow
    // with the cores too. medium-opthost-ck-r4's comm lane spent 1.16x and 1.40x the CPU of its
    // collectives at the profile's figures, in runs whose cores ran at 0.91x and 0.74x (1 /
    // speed: 1.10, 1.36). Between nodes the NIC moves the bytes.
    for (Field f : {&HwProfile::host_mem_bw, &HwProfile::h2d_bw, &HwProfile::d2h_bw, &HwProfile::h2d_bw_alone,
                    &HwProfile::d2h_bw_alone, &HwProfile::cpu_adam_params_per_s, &HwProfile::intra_node_bw})
      hw.*f *= memory_speed;
    hw.nvme_cpu_per_byte_s /= memory_speed;
    for (Field f : {&HwProfile::nvme_cpu_per_request_s, &HwProfile::collective_latency_s}) hw.*f /= speed;
    Scale(hw.allgather_curve, memory_speed);
    Scale(hw.shm_allgather_curve, memory_speed);
    Scale(hw.shm_reduce_scatter_curve, memory_speed);
    Scale(hw.shm_allgather_cpu_beside_curve, 1.0 / memory_speed);  // seconds of CPU
    Scale(hw.shm_reduce_scatter_cpu_beside_curve, 1.0 / memory_speed);
    Scale(hw.shm_allgather_cpu_curve, 1.0 / memory_speed);
    Scale(hw.shm_reduce_scatter_cpu_curve, 1.0 / memory_speed);
  }
  Scale(hw.gemm_curve, speed);
  Scale(hw.gemm_bwd_curve, speed);
  Scale(hw.gemm_curve_bf16, speed);
  for (GemmTokenCurve& t : hw.gemm_token_curves) {
    Scale(t.fwd, speed);
    Scale(t.bwd, speed);
  }
  Scale(hw.attention_curve, speed);
  Scale(hw.attention_fwd_curve, speed);
  hw.description += memory_speed == speed
                        ? fmt::format(" (compute at {:.3f}x its measured speed)", speed)
                        : fmt::format(" (compute at {:.3f}x, memory at {:.3f}x its measured speed)", speed, memory_speed);
  return hw;
}

HwProfile AtDriveSpeed(HwProfile hw, double read, double write) {
  if (read <= 0 || write <= 0 || (read == 1.0 && write == 1.0)) return hw;
  hw.nvme_read_bw *= read;
  hw.nvme_read_bw_node *= read;
  hw.nvme_write_bw *= write;
  hw.nvme_write_bw_node *= write;
  Scale(hw.nvme_lane_read_curve, read);
  Scale(hw.nvme_lane_write_curve, write);
  hw.description += fmt::format(" (drive reading at {:.3f}x and writing at {:.3f}x its measured speed)", read, write);
  return hw;
}

}  // namespace zinf
