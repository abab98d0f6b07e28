// Evaluate one set of knobs: memory per tier, feasibility against the profile's capacities,
// predicted step time (analytic) and the derived figures (tokens/s, TFLOP/s per GPU).
#pragma once

#include <string>

#include "core/hw_profile.h"
#include "core/model_spec.h"
#include "core/plan.h"
#include "planner/model/memory_model.h"

namespace zinf {

struct Capacity {
  double device = 0;  // per GPU, usable
  double host = 0;    // per node, usable
  double nvme = 0;    // per node
};
// Usable capacity: the plan's budgets where set, else the profile's sizes (device less a
// reserve fraction for the runtime and fragmentation; host less 10% for the OS).
Capacity CapacityFor(const HwProfile& hw, const PlanKnobs& k, double device_reserve = 0.05);

// Which tier (if any) overflows: "" when it fits.
std::string OverflowTier(const MemoryEstimate& mem, const Capacity& cap);

// Fills buffer sizes (prefetch, staging, swap buffers, reduce bucket, optimizer chunk) from
// the depths and op sizes so that they are mutually consistent.
void DeriveBuffers(const ModelSpec& m, PlanKnobs& k);

Prediction Evaluate(const ModelSpec& m, const HwProfile& hw, const PlanKnobs& k);

}  // namespace zinf
