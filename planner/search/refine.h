// Refines the analytic ranking with the simulator: the top candidates are simulated, their
// predictions replaced by the simulated step (busy time per resource, phases), re-ranked.
#pragma once

#include "planner/search/search.h"
#include "planner/sim/simulator.h"

namespace zinf {

// Simulated prediction for one candidate (memory from the analytic model).
Prediction SimulatedPrediction(const ModelSpec& m, const HwProfile& hw, const PlanKnobs& k, SimResult* sim = nullptr);

void RefineWithSimulator(const ModelSpec& m, const HwProfile& hw, SearchResult& r);

}  // namespace zinf
