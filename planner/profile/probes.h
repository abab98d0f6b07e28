// The individual probes (one file each).
#pragma once

#include "planner/profile/probe.h"

namespace zinf {

Status ProbeHostMemory(ProfileContext& ctx, HwProfile& hw);   // memory_probe.cc
Status ProbeGemm(ProfileContext& ctx, HwProfile& hw);         // gemm_probe.cc
Status ProbeDeviceCopy(ProfileContext& ctx, HwProfile& hw);   // copy_probe.cc
Status ProbeNvme(ProfileContext& ctx, HwProfile& hw);         // nvme_probe.cc
Status CheckNvmeDir(const std::string& dir);                  // exists, a directory, writable
Status ProbeAdam(ProfileContext& ctx, HwProfile& hw);         // adam_probe.cc
Status ProbeCollectives(ProfileContext& ctx, HwProfile& hw);  // collective_probe.cc

}  // namespace zinf
