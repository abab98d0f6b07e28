// The individual probes (one file each).
#pragma once

#include <string>
#include <vector>

#include "executor/comm/coll_probe.h"
#include "planner/profile/probe.h"

namespace zinf {

class Backend;

Status ProbeHostMemory(ProfileContext& ctx, HwProfile& hw);   // memory_probe.cc
Status ProbeGemm(ProfileContext& ctx, HwProfile& hw);         // gemm_probe.cc
Status ProbeDeviceCopy(ProfileContext& ctx, HwProfile& hw);   // copy_probe.cc
Status ProbeNvme(ProfileContext& ctx, HwProfile& hw);         // nvme_probe.cc
Status CheckNvmeDir(const std::string& dir);                  // exists, a directory, writable
Status ProbeAdam(ProfileContext& ctx, HwProfile& hw);         // adam_probe.cc
Status ProbeOpOverhead(ProfileContext& ctx, HwProfile& hw);   // overhead_probe.cc (runs the next one too)
// GELU and cross-entropy forward/backward elements/s on `be` (kernel_probe.cc).
Status ProbeElementwiseKernels(ProfileContext& ctx, Backend& be, HwProfile& hw);
Status ProbeScheduler(ProfileContext& ctx, HwProfile& hw);    // scheduler_probe.cc
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
