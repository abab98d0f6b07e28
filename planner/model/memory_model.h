// Analytic memory model: bytes per tier for a plan (ZeRO-Infinity paper, section 3, plus the
// buffers a real run needs). Every item carries its formula so reports can spell it out.
#pragma once

#include <string>
#include <vector>

#include "core/hw_profile.h"
#include "core/model_spec.h"
#include "core/plan.h"

namespace zinf {

// Bytes per parameter of each model state, by working dtype and accounting.
struct StateBytes {
  double param = 2;      // working-precision parameters
  double grad = 2;       // working-precision gradients
  double optimizer = 12; // fp32 master + m + v (+ fp32 grads in the paper's accounting)
  double total() const { return param + grad + optimizer; }
};
StateBytes StateBytesFor(const std::string& dtype, const std::string& accounting);
// Bytes per parameter the CPU optimizer reads from NVMe besides the optimizer states: the
// gradients when they live there, and the params when they live there and are their own
// fp32 master (dtype fp32).
double OptimizerExtraNvmeReadBytes(const PlanKnobs& k, const StateBytes& sb);
double DtypeBytes(const std::string& dtype);

struct MemoryEstimate {
  double device_bytes = 0;  // per GPU
  double host_bytes = 0;    // per node
  double nvme_bytes = 0;    // per node
  std::vector<MemoryItem> items;
};

// The paper's closed forms (fp16, bytes), for checks and reports.
double PaperModelStateBytes(const ModelSpec& m);                 // 20 * 12*nl*hd^2
double PaperCheckpointBytes(const ModelSpec& m, double bsz, double ci);   // 2*bsz*seq*hd*nl/ci
double PaperModelStateWorkingBytes(const ModelSpec& m);          // 4 * hd * 4hd
double PaperActivationWorkingBytes(const ModelSpec& m, double bsz, double ci);  // bsz*seq*ci*(16hd+2*heads*seq)

// Per-op sizes (elements) used by the memory model, the time model and the executor.
struct OpSizes {
  double largest_linear = 0;  // params of the largest block linear (before tiling)
  double embedding = 0;       // vocab * hidden (gathered whole: tied LM head)
  double layer = 0;           // params of one block
};
OpSizes ComputeOpSizes(const ModelSpec& m);

// detail=false skips the formula and name text (for the search's hot loop).
MemoryEstimate EstimateMemory(const ModelSpec& m, const HwProfile& hw, const PlanKnobs& k, bool detail = true);

}  // namespace zinf
