// The individual probes (one file each).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "executor/comm/coll_probe.h"
#include "planner/profile/probe.h"

namespace zinf {

class Backend;

Status ProbeHostMemory(ProfileContext& ctx, HwProfile& hw);   // memory_probe.cc
Status ProbeGemm(ProfileContext& ctx, HwProfile& hw);         // gemm_probe.cc (runs the next one too)
Status ProbeSharedCore(ProfileContext& ctx, HwProfile& hw);   // shared_core_probe.cc
Status ProbeDeviceCopy(ProfileContext& ctx, HwProfile& hw);   // copy_probe.cc
Status ProbeNvme(ProfileContext& ctx, HwProfile& hw);         // nvme_probe.cc
Status CheckNvmeDir(const std::string& dir);                  // exists, a directory, writable
// One NVMe setting (block size, queue depth) and its measured bandwidths (bytes/s).
struct NvmeSetting {
  uint64_t block = 0;
  uint32_t depth = 0;
  double write_bw = 0, read_bw = 0;
};
// The setting the profile records: zrun runs every NVMe read and write at one block size and
// depth (the plan's), and its reads and writes share one queue, so the profile keeps the
// setting that moves a byte each way fastest (least 1/read + 1/write) and both bandwidths
// at it, not the best read and the best write of two different settings. Empty: nullptr.
const NvmeSetting* PickNvmeSetting(const std::vector<NvmeSetting>& measured);
Status ProbeAdam(ProfileContext& ctx, HwProfile& hw);         // adam_probe.cc
Status ProbeOpOverhead(ProfileContext& ctx, HwProfile& hw);   // overhead_probe.cc (runs the next one too)
// GELU and cross-entropy forward/backward elements/s on `be` (kernel_probe.cc).
Status ProbeElementwiseKernels(ProfileContext& ctx, Backend& be, HwProfile& hw);
Status ProbeScheduler(ProfileContext& ctx, HwProfile& hw);    // scheduler_probe.cc
Status ProbeCoupling(ProfileContext& ctx, HwProfile& hw);     // coupling_probe.cc
Status ProbeFetchWake(ProfileContext& ctx, HwProfile& hw);    // fetch_wake_probe.cc
Status ProbeCollectives(ProfileContext& ctx, HwProfile& hw);  // collective_probe.cc
Status ProbeCuda(ProfileContext& ctx, HwProfile& hw);         // cuda_probe.cc (ZINF_PROFILE_BACKEND=cuda)

struct CollectiveCurve {
  struct Point {
    CollMeasurement allgather, reduce_scatter, allreduce;
  };
  std::vector<Point> points;
  int ranks = 0;
  std::string transport;
};
// The collective sweep; every rank of `c` calls it (MPI ranks other than 0 only this).
Status MeasureCollectiveCurve(Comm& c, bool quick, CollectiveCurve* out);

}  // namespace zinf
